package controller

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
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
	// maxConns bounds a server's open connections: past it, the oldest
	// idle kept-alive connection is closed to make room, or, with none
	// idle, a new connection waits in the kernel's accept queue until one
	// ends (each ends within the read or idle timeout). kubelet probes
	// with one connection at a time, a scraper scrapes with one. Each
	// costs at most its headers, its buffers and TLS's (some 64 KiB): the
	// connections of a port cost 8 MiB at most.
	maxConns = 128
	// maxConnsPerAddr bounds the open connections from one client
	// address: past it, that address's oldest idle connection is closed,
	// or, with none idle, the new one is closed at once, so that one
	// client cannot take the slots kubelet's probes and the scrapers
	// need. (Clients that leave connections idle, one per request, as
	// some scripts do, keep working: their idle ones make room.)
	maxConnsPerAddr = 32
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
	// idle are the connections the server keeps alive between requests,
	// with when they became idle (connState).
	idle map[*limitedConn]time.Time
}

func newLimitListener(l net.Listener, total, perAddr int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, total), perAddr: perAddr,
		done: make(chan struct{}), byAddr: map[string]int{}, idle: map[*limitedConn]time.Time{}}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		select {
		case l.slots <- struct{}{}:
		default:
			// Full: an idle connection makes room, else wait.
			l.closeOldestIdle("")
			select {
			case l.slots <- struct{}{}:
			case <-l.done:
				return nil, net.ErrClosed
			}
		}
		c, err := l.Listener.Accept()
		if err != nil {
			<-l.slots
			return nil, err
		}
		addr := clientAddr(c)
		l.mu.Lock()
		full := l.byAddr[addr] >= l.perAddr
		l.mu.Unlock()
		if full && l.closeOldestIdle(addr) {
			full = false
		}
		l.mu.Lock()
		if full || l.byAddr[addr] >= l.perAddr {
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

// closeOldestIdle closes the connection idle the longest, of addr or of
// any address when addr is "", and tells whether there was one.
func (l *limitListener) closeOldestIdle(addr string) bool {
	l.mu.Lock()
	var oldest *limitedConn
	var since time.Time
	for c, t := range l.idle {
		if (addr == "" || c.addr == addr) && (oldest == nil || t.Before(since)) {
			oldest, since = c, t
		}
	}
	if oldest != nil {
		delete(l.idle, oldest)
	}
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	_ = oldest.Close()
	return true
}

// connState is the server's ConnState hook: it keeps track of the
// connections idle between requests.
func (l *limitListener) connState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if state == http.StateIdle {
		l.idle[lc] = time.Now()
	} else {
		delete(l.idle, lc)
	}
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *limitListener) release(c *limitedConn, addr string) {
	l.mu.Lock()
	delete(l.idle, c)
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
	c.once.Do(func() { c.l.release(c, c.addr) })
	return err
}
