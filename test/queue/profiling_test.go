package queue

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProfiling: without --profiling there is nothing under
// /debug/pprof/ and /metrics is unchanged. With it, the profiles are
// served only over HTTPS behind the token and RBAC checks (issue 42,
// Deliver 5): this package's serve, with plain HTTP metrics, refuses it
// (TestProfilingNeedsSecureMetrics, pkg/cli/serve), and TestMetricsAccess
// (test/install) reads them with a profiler's grant.
func TestProfiling(t *testing.T) {
	fresh(t)
	get := func(url string) (int, string) { t.Helper(); return httpGet(t, url) }

	off := startServe(t, "--controllers=queue")
	if code, _ := get("http://" + off.Metrics + "/debug/pprof/heap"); code != http.StatusNotFound {
		t.Errorf("without --profiling: /debug/pprof/heap answered %d, want 404", code)
	}
	if code, _ := get("http://" + off.Health + "/debug/pprof/heap"); code != http.StatusNotFound {
		t.Errorf("the health address answered %d for a profile, want 404", code)
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
