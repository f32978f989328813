package rules

import (
	"strings"
	"testing"
)

// TestParseResourceList: the parser shared by the queue flags and 'job
// create' (the full table and the fuzz test are in pkg/cli/queue).
func TestParseResourceList(t *testing.T) {
	l, err := ParseResourceList("capability", " cpu=500m, memory=1.5Gi ,nvidia.com/gpu=2")
	if err != nil {
		t.Fatal(err)
	}
	if q := l["memory"]; q.String() != "1536Mi" || len(l) != 3 {
		t.Errorf("parsed %v", l)
	}
	for in, want := range map[string]string{
		"cpu=lots":     "invalid --capability: cpu=lots is not a quantity",
		"cpu=1,cpu=2":  "cpu is given twice",
		"cpu=-1":       "must not be negative",
		"cpu=1000E":    "cannot be stored as written (Kubernetes would store 1)",
		"cpu=1e-2000":  "the exponent must be between -1000 and 1000",
		"cpu=100e1000": "would be stored as 1e1002",
	} {
		if _, err := ParseResourceList("capability", in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", in, err, want)
		}
	}
}
