package queue

import (
	"os"
	"regexp"
	"testing"
)

// TestMemoryLimitFromContainer (issue 42, Deliver 5): serve's Go memory
// limit is 90 % of the container's, given by the Deployment as
// MEMORY_LIMIT (Downward API), and GOMEMLIMIT, when set, wins; read from
// the process's own metrics (go_gc_gomemlimit_bytes).
func TestMemoryLimitFromContainer(t *testing.T) {
	fresh(t)
	limit := func(addr string) string {
		t.Helper()
		_, body := httpGet(t, "http://"+addr+"/metrics")
		m := regexp.MustCompile(`(?m)^go_gc_gomemlimit_bytes (\S+)$`).FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no go_gc_gomemlimit_bytes in serve's metrics")
		}
		return m[1]
	}
	// serve inherits the test's environment; t.Setenv restores it.
	t.Setenv("GOMEMLIMIT", "")
	if err := os.Unsetenv("GOMEMLIMIT"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMORY_LIMIT", "536870912") // 512 MiB
	s := startServe(t, "--controllers=queue")
	if got := limit(s.Metrics); got != "4.8318382e+08" && got != "483183820" {
		t.Errorf("MEMORY_LIMIT=512MiB: go_gc_gomemlimit_bytes %s, want 483183820 (90 %%)", got)
	}
	s.Kill()

	t.Setenv("GOMEMLIMIT", "100MiB")
	s = startServe(t, "--controllers=queue")
	if got := limit(s.Metrics); got != "1.048576e+08" && got != "104857600" {
		t.Errorf("GOMEMLIMIT=100MiB: go_gc_gomemlimit_bytes %s, want 104857600 (the environment wins)", got)
	}
}
