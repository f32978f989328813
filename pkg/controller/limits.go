package controller

import (
	"net"
	"net/http"
	"sync"
)

// What each of serve's HTTP servers takes from a client (issue 58). Go's
// defaults are 1 MiB of request headers per connection and no bound on
// connections: a few hundred connections sending their headers slowly
// held hundreds of MiB of serve's memory (+474 MiB measured), past the
// Deployment's limit, from any pod that reaches the port, without a token.
//
// Each endpoint's need: a probe is a GET with a handful of short headers
// (kubelet's is about 200 bytes); a scrape a GET with a bearer token
// (a ServiceAccount token about 1 KiB, an OIDC token a few KiB). Neither
// carries a body.
const (
	// healthHeaderBytes bounds a request's headers on the probes' port
	// (Go's server lets 4 KiB more through before refusing with 431).
	healthHeaderBytes = 4 << 10
	// metricsHeaderBytes bounds them on the metrics port.
	metricsHeaderBytes = 16 << 10
	// maxConns bounds a server's open connections: past it, a new
	// connection waits in the kernel's accept queue until one ends (each
	// ends within the read or idle timeout). kubelet probes with one
	// connection at a time, a scraper scrapes with one.
	maxConns = 64
	// maxConnsPerAddr bounds the open connections from one client
	// address: past it, a new one is closed at once, so that one client
	// cannot take the slots kubelet's probes and the scrapers need.
	maxConnsPerAddr = 8
)

// limitRequests refuses a request that carries a body (413): no endpoint
// of serve reads one, and none is read on its behalf.
func limitRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			w.Header().Set("Connection", "close")
			http.Error(w, "Request Entity Too Large: serve's endpoints take no body", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 0)
		h.ServeHTTP(w, r)
	})
}

// limitListener bounds the connections it hands out: at most total open
// at once (Accept waits for one to close), at most perAddr from one client
// address (more are closed at once, without being handed out).
type limitListener struct {
	net.Listener
	slots   chan struct{}
	perAddr int
	done    chan struct{}
	once    sync.Once

	mu     sync.Mutex
	byAddr map[string]int
}

func newLimitListener(l net.Listener, total, perAddr int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, total), perAddr: perAddr,
		done: make(chan struct{}), byAddr: map[string]int{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
		c, err := l.Listener.Accept()
		if err != nil {
			<-l.slots
			return nil, err
		}
		addr := clientAddr(c)
		l.mu.Lock()
		if l.byAddr[addr] >= l.perAddr {
			l.mu.Unlock()
			_ = c.Close()
			<-l.slots
			continue
		}
		l.byAddr[addr]++
		l.mu.Unlock()
		return &limitedConn{Conn: c, l: l, addr: addr}, nil
	}
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *limitListener) release(addr string) {
	l.mu.Lock()
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
	l.mu.Unlock()
	<-l.slots
}

// open is the number of connections handed out and not yet closed.
func (l *limitListener) open() int { return len(l.slots) }

// clientAddr is a connection's client address without its port.
func clientAddr(c net.Conn) string {
	a := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(a); err == nil {
		return host
	}
	return a
}

// limitedConn gives its slot back once, at its first Close.
type limitedConn struct {
	net.Conn
	l    *limitListener
	addr string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.addr) })
	return err
}
