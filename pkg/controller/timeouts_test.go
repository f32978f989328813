package controller

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"testing"
	"time"
)

// shortTimeouts sets the servers' timeouts to d for the test.
func shortTimeouts(t *testing.T, d time.Duration) {
	r, w, i := serverReadTimeout, serverWriteTimeout, serverIdleTimeout
	serverReadTimeout, serverWriteTimeout, serverIdleTimeout = d, d, d
	t.Cleanup(func() { serverReadTimeout, serverWriteTimeout, serverIdleTimeout = r, w, i })
}

// start serves h as serve does (newServer) on a loopback port.
func start(t *testing.T, h http.Handler, perRequestWrite bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(h, perRequestWrite)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return ln.Addr().String()
}

// TestServerTimeouts (issue 42, Deliver 5): a connection that sends half
// a request, or stays idle after one, is closed by serve's servers after
// their read or idle timeout; before, it was held for as long as the
// client liked.
func TestServerTimeouts(t *testing.T) {
	shortTimeouts(t, 500*time.Millisecond)
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }), false)

	closedWithin := func(what string, c net.Conn, d time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(d))
		_, err := io.ReadAll(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the connection still open after %v", what, d)
		}
	}
	// Half a request: headers never end.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	closedWithin("half a request", c, 5*time.Second)

	// A whole request, then nothing: the kept-alive connection is closed.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, _ = io.WriteString(c2, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	closedWithin("an idle connection", c2, 5*time.Second)
}

// TestProfileLongerThanWriteTimeout: on the metrics address a CPU profile
// of more seconds than the write timeout is served whole (pprof refuses a
// duration beyond a server-wide WriteTimeout, and the timeout would cut
// it), while any other answer still gets the write timeout; seconds past
// maxProfileSeconds are refused.
func TestProfileLongerThanWriteTimeout(t *testing.T) {
	shortTimeouts(t, time.Second)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Second)
		_, _ = io.WriteString(w, "late")
	})
	addr := start(t, mux, true)
	client := &http.Client{Timeout: 15 * time.Second}

	resp, err := client.Get("http://" + addr + "/debug/pprof/profile?seconds=2")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("a 2 s profile with a 1 s write timeout: %d, %d bytes, %v: %.200s", resp.StatusCode, len(body), err, body)
	}
	if resp, err := client.Get("http://" + addr + "/slow"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) == "late" {
			t.Errorf("an answer after the write timeout was delivered")
		}
	}
	resp, err = client.Get("http://" + addr + "/debug/pprof/profile?seconds=100000")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "seconds") {
		t.Errorf("seconds=100000: %d %s", resp.StatusCode, b)
	}
}
