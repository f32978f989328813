package serve

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
)

// TestMemoryLimit: GOMEMLIMIT wins (nothing set); else MEMORY_LIMIT (the
// Downward API), else the cgroup's memory.max, 90 % of it; "max" and
// garbage set nothing.
func TestMemoryLimit(t *testing.T) {
	noFile := func(string) ([]byte, error) { return nil, errors.New("no such file") }
	file := func(s string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if p != cgroupMemoryMax {
				t.Errorf("read %s", p)
			}
			return []byte(s), nil
		}
	}
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		read func(string) ([]byte, error)
		want int64
		from string
	}{
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "100MiB", "MEMORY_LIMIT": "1000"}, file("2000\n"), 0, ""},
		{"Downward API", map[string]string{"MEMORY_LIMIT": "536870912"}, file("1000\n"), 483183820, memoryLimitEnv},
		{"cgroup v2", nil, file("536870912\n"), 483183820, cgroupMemoryMax},
		{"cgroup without limit", nil, file("max\n"), 0, ""},
		{"no cgroup file", nil, noFile, 0, ""},
		{"garbage in the env, cgroup used", map[string]string{"MEMORY_LIMIT": "512Mi"}, file("1000"), 900, cgroupMemoryMax},
	} {
		got, from := memoryLimit(logr.Discard(), env(tc.env), tc.read)
		if got != tc.want || from != tc.from {
			t.Errorf("%s: %d from %q, want %d from %q", tc.name, got, from, tc.want, tc.from)
		}
	}
}
