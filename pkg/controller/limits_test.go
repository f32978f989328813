package controller

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dialFrom opens a connection to addr from the loopback address src.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer tells whether the server closed c (a read ends) within d.
func closedByServer(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	ne, ok := err.(net.Error)
	return !(ok && ne.Timeout())
}

// TestLimitListener (issue 58): past maxConnsPerAddr, a client's new
// connection is closed at once while another address is still served;
// a slot is given back when its connection closes; past the total, Accept
// waits.
func TestLimitListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(raw, 4, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	addr := raw.Addr().String()
	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	s1, s2 := <-accepted, <-accepted
	a3 := dialFrom(t, "127.0.0.2", addr)
	if !closedByServer(a3, 2*time.Second) {
		t.Fatal("a third connection from 127.0.0.2 was kept")
	}
	b1 := dialFrom(t, "127.0.0.3", addr)
	<-accepted
	if closedByServer(a1, 100*time.Millisecond) || closedByServer(b1, 100*time.Millisecond) {
		t.Fatal("a connection within the bounds was closed")
	}
	_ = s1.Close()
	dialFrom(t, "127.0.0.2", addr)
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("a slot given back was not taken")
	}
	// 3 open (s2, b1's, the last); one more makes 4, the next waits.
	_ = a2
	dialFrom(t, "127.0.0.4", addr)
	<-accepted
	dialFrom(t, "127.0.0.4", addr)
	select {
	case <-accepted:
		t.Fatal("a connection past the total was handed out")
	case <-time.After(300 * time.Millisecond):
	}
	_ = s2.Close()
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was not handed out once a slot was free")
	}
	if n := l.open(); n != 4 {
		t.Errorf("open = %d, want 4", n)
	}
}

// TestServerRequestLimits (issue 58): headers past the bound are refused
// (431) and a request with a body is refused (413); a probe is answered.
func TestServerRequestLimits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(limitRequests(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })), false)
	s.MaxHeaderBytes = healthHeaderBytes
	go func() { _ = s.Serve(newLimitListener(ln, maxConns, maxConnsPerAddr)) }()
	defer s.Close()
	url := "http://" + ln.Addr().String() + "/healthz"
	do := func(req *http.Request) int {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if got := do(req); got != http.StatusOK {
		t.Errorf("probe: %d", got)
	}
	req, _ = http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("X-Big", strings.Repeat("a", 2*healthHeaderBytes+4096))
	if got := do(req); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("%d bytes of headers: %d, want 431", 2*healthHeaderBytes+4096, got)
	}
	req, _ = http.NewRequest(http.MethodPost, url, strings.NewReader(strings.Repeat("b", 1<<20)))
	if got := do(req); got != http.StatusRequestEntityTooLarge {
		t.Errorf("a body: %d, want 413", got)
	}
}

// TestIdleConnectionsMakeRoom: a client that leaves each connection idle
// (a new http.Transport per request, as scripts and some tests do) keeps
// being served past the per-address bound: its oldest idle connection is
// closed to make room. Connections that are not idle are not.
func TestIdleConnectionsMakeRoom(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(raw, 4, 2)
	s := newServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }), false)
	s.ConnState = l.connState
	go func() { _ = s.Serve(l) }()
	defer s.Close()
	url := "http://" + raw.Addr().String() + "/healthz"
	for i := range 10 {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("request %d, its connection left idle: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	l.mu.Lock()
	n := l.byAddr["127.0.0.2"]
	l.mu.Unlock()
	if n > 2 {
		t.Errorf("%d connections open from one address, want at most 2", n)
	}
	// Two connections in the middle of a request (headers not ended) are
	// not idle: a third from that address is closed.
	a, b := dialFrom(t, "127.0.0.3", raw.Addr().String()), dialFrom(t, "127.0.0.3", raw.Addr().String())
	_, _ = io.WriteString(a, "GET / HTTP/1.1\r\n")
	_, _ = io.WriteString(b, "GET / HTTP/1.1\r\n")
	time.Sleep(100 * time.Millisecond)
	if c := dialFrom(t, "127.0.0.3", raw.Addr().String()); !closedByServer(c, 2*time.Second) {
		t.Error("a third connection from an address whose two are busy was kept")
	}
	if closedByServer(a, 100*time.Millisecond) || closedByServer(b, 100*time.Millisecond) {
		t.Error("a busy connection was closed")
	}
}
