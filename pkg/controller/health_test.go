package controller

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHealth: ok while the caches fill within the timeout and once they
// have; not ok when they have not filled after it; not ok for good once a
// controller stopped or the Lease was lost (the first reason kept).
func TestHealth(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newHealth(time.Minute)
	h.now = func() time.Time { return now }
	code := func() (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
		return w.Code, w.Body.String()
	}
	if c, b := code(); c != 200 || b != "ok" {
		t.Fatalf("at start: %d %q", c, b)
	}
	h.cachesWaiting()
	now = now.Add(59 * time.Second)
	if c, _ := code(); c != 200 {
		t.Errorf("caches filling for 59 s of 60: %d", c)
	}
	now = now.Add(2 * time.Second)
	if c, b := code(); c != 500 || !strings.Contains(b, "caches have not filled in 1m1s") {
		t.Errorf("caches filling for 61 s: %d %q", c, b)
	}
	h.cachesSynced()
	if c, _ := code(); c != 200 {
		t.Errorf("caches filled: %d", c)
	}
	h.fail("the queue controller stopped")
	h.fail("lost the leader-election Lease")
	if c, b := code(); c != 500 || !strings.Contains(b, "the queue controller stopped") {
		t.Errorf("a controller stopped: %d %q", c, b)
	}
}
