package queue

import (
	"errors"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// FuzzParseResources feeds arbitrary --capability/--deserved/--guarantee
// values to the parser. Whatever the input, it must not panic; a refusal
// must be a usage error (so the root prints it with the usage hint and
// exit code 1, never a Go error chain); an accepted list must hold only
// qualified names and non-negative quantities, and printing it back as
// NAME=QUANTITY pairs must parse to the same list (so what 'queue describe'
// shows can be pasted back into a flag).
func FuzzParseResources(f *testing.F) {
	for _, s := range []string{
		"", " ", "cpu=4", "cpu=4,memory=8Gi", "cpu=500m, memory=1.5Gi ,nvidia.com/gpu=2",
		"cpu=4,cpu=5", "cpu", "=4", "cpu=", "cpu=-1", "cpu=1e3", "memory=1E", "cpu=0.0001",
		"a/b/c=1", "example.com/x=9223372036854775807", "cpu=99999999999999999999999999Ki",
		",", "cpu=4,,memory=1", "cpu==4", "cpu=4=5", "CPU=1", "pods=+3", "cpu=.5",
		"hugepages-2Mi=1Gi", "requests.cpu=2", strings.Repeat("a", 64) + "=1",
		"cpu=1e-2000000000", "cpu=1e4294967297", "cpu=1e1000", "cpu=5E-3",
		"cpu=1000E", "cpu=100E", "cpu=1000000000000000000000", "cpu=8Ei",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, err := parseResources("capability", s)
		if err != nil {
			var ue util.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("parseResources(%q): error %T is not a usage error: %v", s, err, err)
			}
			if util.Message(err) == "" {
				t.Fatalf("parseResources(%q): empty message", s)
			}
			return
		}
		names := make([]string, 0, len(list))
		for name, q := range list {
			if errs := validation.IsQualifiedName(string(name)); len(errs) > 0 {
				t.Fatalf("parseResources(%q) accepted name %q: %v", s, name, errs)
			}
			if q.Sign() < 0 {
				t.Fatalf("parseResources(%q) accepted negative %s=%s", s, name, q.String())
			}
			names = append(names, string(name))
		}
		sort.Strings(names)
		pairs := make([]string, len(names))
		for i, n := range names {
			q := list[corev1.ResourceName(n)]
			pairs[i] = n + "=" + q.String()
		}
		printed := strings.Join(pairs, ",")
		again, err := parseResources("capability", printed)
		if err != nil {
			t.Fatalf("parseResources(%q) = %q, which does not parse back: %v", s, printed, err)
		}
		if len(again) != len(list) {
			t.Fatalf("round trip of %q via %q: %d resources, want %d", s, printed, len(again), len(list))
		}
		for name, q := range list {
			g, ok := again[name]
			if !ok || g.Cmp(q) != 0 {
				t.Fatalf("round trip of %q via %q: %s=%v, want %s", s, printed, name, g.String(), q.String())
			}
		}
	})
}
