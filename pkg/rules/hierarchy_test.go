package rules

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// tree builds queues from name:parent pairs.
func tree(pairs ...string) map[string]*v1beta1.Queue {
	out := map[string]*v1beta1.Queue{}
	for i := 0; i < len(pairs); i += 2 {
		out[pairs[i]] = &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: pairs[i]}, Spec: v1beta1.QueueSpec{Parent: pairs[i+1]}}
	}
	return out
}

func TestWalkUp(t *testing.T) {
	qs := tree(
		"root", "elsewhere", // root's spec.parent is ignored
		"default", "",
		"a", "root", "b", "a", "c", "b",
		"x", "y", "y", "x", // a two-cycle
		"p", "q", "q", "r", "r", "p", // a three-cycle
		"under", "x", // below a cycle, not in it
		"lost", "gone", // missing parent
		"deep", "lost",
		"self", "self",
	)
	for _, tc := range []struct {
		start   string
		path    []string
		missing string
		cycle   []string
		inCycle bool
	}{
		{start: "root", path: []string{"root"}},
		{start: "default", path: []string{"default", "root"}},
		{start: "c", path: []string{"c", "b", "a", "root"}},
		{start: "x", path: []string{"x", "y"}, cycle: []string{"x", "y", "x"}, inCycle: true},
		{start: "q", path: []string{"q", "r", "p"}, cycle: []string{"q", "r", "p", "q"}, inCycle: true},
		{start: "under", path: []string{"under", "x", "y"}, cycle: []string{"x", "y", "x"}},
		{start: "lost", path: []string{"lost"}, missing: "gone"},
		{start: "deep", path: []string{"deep", "lost"}, missing: "gone"},
		{start: "self", path: []string{"self"}, cycle: []string{"self", "self"}, inCycle: true},
	} {
		a, err := WalkUp(tc.start, MapLookup(qs))
		if err != nil {
			t.Fatalf("%s: %v", tc.start, err)
		}
		if !reflect.DeepEqual(a.Path, tc.path) || a.Missing != tc.missing || !reflect.DeepEqual(a.Cycle(), tc.cycle) || a.InCycle() != tc.inCycle {
			t.Errorf("%s: path %v missing %q cycle %v (in it: %t), want %v %q %v %t",
				tc.start, a.Path, a.Missing, a.Cycle(), a.InCycle(), tc.path, tc.missing, tc.cycle, tc.inCycle)
		}
	}
	if _, err := WalkUp("nope", MapLookup(qs)); err == nil {
		t.Error("walking up from a queue that does not exist must fail")
	}
	if got := FormatCycle([]string{"p", "q", "r", "p"}); got != "p -> q -> r -> p" {
		t.Errorf("FormatCycle = %q", got)
	}
}

func TestChildrenOf(t *testing.T) {
	qs := []v1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Spec: v1beta1.QueueSpec{Parent: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: v1beta1.QueueSpec{Parent: "team-a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "dev"}, Spec: v1beta1.QueueSpec{Parent: "team-a"}},
	}
	for name, want := range map[string]string{"root": "default,team-a", "team-a": "dev,prod", "dev": "", "missing": ""} {
		if got := strings.Join(ChildrenOf(name, qs), ","); got != want {
			t.Errorf("ChildrenOf(%s) = %q, want %q", name, got, want)
		}
	}
}

func TestNeedsDefaultParent(t *testing.T) {
	for _, c := range []struct {
		name, parent string
		want         bool
	}{
		{keys.RootQueue, "", false},
		{keys.RootQueue, "x", false},
		{"a", "", true},
		{"a", keys.RootQueue, false},
		{"a", "b", false},
	} {
		q := &v1beta1.Queue{}
		q.Name, q.Spec.Parent = c.name, c.parent
		if got := NeedsDefaultParent(q); got != c.want {
			t.Errorf("NeedsDefaultParent(%s, parent %q) = %v, want %v", c.name, c.parent, got, c.want)
		}
	}
}
