package queue

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProfiling: with --profiling, serve's metrics address also serves Go's
// pprof profiles (an operator takes a heap profile of serve in their
// cluster with 'go tool pprof http://…/debug/pprof/heap'); without it,
// there is nothing under /debug/pprof/ and /metrics is unchanged.
func TestProfiling(t *testing.T) {
	fresh(t)
	get := func(url string) (int, string) { t.Helper(); return httpGet(t, url) }

	on := startServe(t, "--controllers=queue", "--profiling")
	if code, body := get("http://" + on.Metrics + "/debug/pprof/heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile:") {
		t.Errorf("--profiling: /debug/pprof/heap answered %d:\n%.200s", code, body)
	}
	if code, body := get("http://" + on.Metrics + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("--profiling: /debug/pprof/ answered %d:\n%.200s", code, body)
	}
	if code, _ := get("http://" + on.Health + "/debug/pprof/heap"); code != http.StatusNotFound {
		t.Errorf("--profiling: the health address answered %d for a profile, want 404 (profiles are on the metrics address only)", code)
	}
	on.Kill()

	off := startServe(t, "--controllers=queue")
	if code, _ := get("http://" + off.Metrics + "/debug/pprof/heap"); code != http.StatusNotFound {
		t.Errorf("without --profiling: /debug/pprof/heap answered %d, want 404", code)
	}
	if code, body := get("http://" + off.Metrics + "/metrics"); code != http.StatusOK || !strings.Contains(body, "workqueue_") {
		t.Errorf("without --profiling: /metrics answered %d:\n%.200s", code, body)
	}
}

// httpGet reads url whole: its status code and body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
