package controller

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Timeouts of serve's HTTP servers. Without them a client that opens
// connections and then sends nothing, reads nothing, or keeps them idle
// holds a goroutine and a socket of serve each, for as long as it likes.
// (Variables: the tests shorten them.)
var (
	// serverReadTimeout bounds reading a request, headers and body: a
	// GET of /metrics, /healthz or a profile carries no body.
	serverReadTimeout = 10 * time.Second
	// serverWriteTimeout bounds an answer from the end of its request:
	// the two reviews (10 s each at most, usually cached) and /metrics of
	// a large cluster, or a probe.
	serverWriteTimeout = 30 * time.Second
	// serverIdleTimeout bounds a kept-alive connection between requests:
	// longer than Prometheus's default scrape interval (1 min), so that
	// a scraper keeps its TLS connection from one scrape to the next.
	serverIdleTimeout = 90 * time.Second
)

// maxProfileSeconds bounds the seconds parameter of a CPU profile or a
// trace: each keeps serve busy, and its connection open, that long.
const maxProfileSeconds = 600

// newServer is an http.Server with serve's timeouts. perRequestWrite
// leaves the write timeout to withWriteDeadlines, for the metrics address
// where pprof's CPU profile and trace answer only after their seconds
// parameter: a server-wide WriteTimeout would cut them, and pprof refuses
// outright a duration beyond the server's WriteTimeout.
func newServer(h http.Handler, perRequestWrite bool) *http.Server {
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: serverReadTimeout,
		ReadTimeout:       serverReadTimeout,
		WriteTimeout:      serverWriteTimeout,
		IdleTimeout:       serverIdleTimeout,
	}
	if perRequestWrite {
		s.Handler, s.WriteTimeout = withWriteDeadlines(h), 0
	}
	return s
}

// withWriteDeadlines sets each request's write deadline: serverWriteTimeout,
// and for /debug/pprof/profile and /debug/pprof/trace that plus their
// seconds parameter (pprof's default when absent: 30 s for a profile, 1 s
// for a trace), at most maxProfileSeconds.
func withWriteDeadlines(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := serverWriteTimeout
		if r.URL.Path == "/debug/pprof/profile" || r.URL.Path == "/debug/pprof/trace" {
			sec := int64(30)
			if r.URL.Path == "/debug/pprof/trace" {
				sec = 1
			}
			if v := r.URL.Query().Get("seconds"); v != "" {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n <= 0 || n > maxProfileSeconds {
					http.Error(w, fmt.Sprintf("seconds must be a whole number from 1 to %d", maxProfileSeconds), http.StatusBadRequest)
					return
				}
				sec = n
			}
			d += time.Duration(sec) * time.Second
		}
		// Every ResponseWriter of net/http's server supports it; were it
		// not, the connection would only lack this bound.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
		h.ServeHTTP(w, r)
	})
}
