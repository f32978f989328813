package queue

import (
	"os"
	"regexp"
	"testing"
)

// TestGCPercent: serve runs its garbage collector at GOGC=50 unless its
// environment sets GOGC, which then wins. The value is read back from
// serve's own metrics, where the Go collector exports it.
func TestGCPercent(t *testing.T) {
	fresh(t)
	percent := func(addr string) string {
		t.Helper()
		_, body := httpGet(t, "http://"+addr+"/metrics")
		m := regexp.MustCompile(`(?m)^go_gc_gogc_percent (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no go_gc_gogc_percent in serve's metrics")
		}
		return m[1]
	}

	// serve inherits the test's environment: t.Setenv restores GOGC (set
	// or not) when the test ends, and the Unsetenv makes it unset here.
	t.Setenv("GOGC", "")
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--controllers=queue")
	if got := percent(s.Metrics); got != "50" {
		t.Errorf("GOGC unset: go_gc_gogc_percent %s, want 50", got)
	}
	s.Kill()

	t.Setenv("GOGC", "100")
	s = startServe(t, "--controllers=queue")
	if got := percent(s.Metrics); got != "100" {
		t.Errorf("GOGC=100: go_gc_gogc_percent %s, want 100 (the environment wins)", got)
	}
}
