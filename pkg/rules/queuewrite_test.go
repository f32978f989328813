package rules

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// mapNeighbours holds the other queues for the rules, as serve's cache does.
type mapNeighbours map[string]*v1beta1.Queue

func (m mapNeighbours) Queue(name string) *v1beta1.Queue { return m[name] }
func (m mapNeighbours) Children(parent string) []*v1beta1.Queue {
	var out []*v1beta1.Queue
	for _, q := range m {
		if EffectiveParent(q) == parent {
			out = append(out, q)
		}
	}
	return out
}

func testQueue(t *testing.T, name, parent, capability, guarantee string) *v1beta1.Queue {
	t.Helper()
	q := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.QueueSpec{Parent: parent}}
	var err error
	if capability != "" {
		if q.Spec.Capability, err = ParseResourceList("capability", capability); err != nil {
			t.Fatal(err)
		}
	}
	if guarantee != "" {
		if q.Spec.Guarantee.Resource, err = ParseResourceList("guarantee", guarantee); err != nil {
			t.Fatal(err)
		}
	}
	return q
}

func TestCheckQueueWrite(t *testing.T) {
	n := mapNeighbours{}
	for _, q := range []*v1beta1.Queue{
		testQueue(t, "root", "", "cpu=1", ""),
		testQueue(t, "p", "", "cpu=16,memory=64Gi", "cpu=4"),
		testQueue(t, "p-b", "p", "cpu=8", "cpu=1000m"),
		testQueue(t, "p-a", "p", "cpu=8,nvidia.com/gpu=2", ""),
		testQueue(t, "p-c", "p", "cpu=7900m,memory=1Gi", ""),
		testQueue(t, "solo", "p-a", "", ""),
	} {
		n[q.Name] = q
	}
	for _, c := range []struct {
		name    string
		q, old  *v1beta1.Queue
		wantErr string // "" allowed
	}{
		{name: "within the parent", q: testQueue(t, "new", "p", "cpu=16", "cpu=4")},
		{name: "root bounds nothing", q: testQueue(t, "big", "", "cpu=1000", "")},
		{name: "a parent that does not exist bounds nothing", q: testQueue(t, "lost", "nowhere", "cpu=1000", "")},
		{name: "above the parent, every list named", q: testQueue(t, "new", "p", "cpu=17,memory=65Gi", "cpu=5"),
			wantErr: "queue new exceeds its parent p in capability cpu, capability memory, guarantee cpu: a queue may not have more than its parent; lower it or raise p's"},
		{name: "a cycle of two", q: testQueue(t, "p-a", "solo", "", ""), old: testQueue(t, "p-a", "p", "", ""),
			wantErr: "queue p-a cannot have parent solo: the parent of solo is p-a, which would make a cycle: pick another parent"},
		{name: "below a child: the one that sets the most, the first by name among equals", q: testQueue(t, "p", "", "cpu=7", ""), old: n["p"],
			wantErr: "queue p is below its child p-a in capability cpu: a queue may not have less than its child; raise it or lower p-a's"},
		{name: "below two children", q: testQueue(t, "p", "", "cpu=16,memory=512Mi,nvidia.com/gpu=1", "cpu=500m"), old: n["p"],
			wantErr: "queue p is below its child p-c in capability memory, capability nvidia.com/gpu, guarantee cpu (and other children)"},
		{name: "an update that changes neither parent nor resources is not checked",
			q:   func() *v1beta1.Queue { q := n["p-a"].DeepCopy(); q.Spec.Weight = 3; q.Spec.Parent = "p"; return q }(),
			old: func() *v1beta1.Queue { q := n["p-a"].DeepCopy(); q.Spec.Parent = "p"; return q }()},
		{name: "the same amounts written otherwise are no change", q: testQueue(t, "p-b", "p", "cpu=8000m", "cpu=1"), old: n["p-b"]},
		{name: "root is no child's bound", q: testQueue(t, "root", "", "cpu=1", ""), old: testQueue(t, "root", "", "cpu=2", "")},
	} {
		err := CheckQueueWrite(c.q, c.old, n)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), c.wantErr)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.wantErr)
		}
	}
}

func TestCheckQueueDelete(t *testing.T) {
	closed := func(q *v1beta1.Queue) *v1beta1.Queue { q.Status.State = v1beta1.QueueStateClosed; return q }
	n := mapNeighbours{}
	for _, q := range []*v1beta1.Queue{
		testQueue(t, "p", "", "", ""), testQueue(t, "p-b", "p", "", ""), testQueue(t, "p-a", "p", "", ""),
		testQueue(t, "q", "", "", ""), testQueue(t, "q-a", "q", "", ""), testQueue(t, "leaf", "", "", ""),
	} {
		n[q.Name] = q
	}
	if err := CheckQueueDelete(closed(n["p"].DeepCopy()), n); err == nil ||
		err.Error() != "queue p has child queue p-a (and 1 more): delete it or move it to another parent first" {
		t.Errorf("closed parent of two: %v", err)
	}
	if err := CheckQueueDelete(closed(n["q"].DeepCopy()), n); err == nil ||
		err.Error() != "queue q has child queue q-a: delete it or move it to another parent first" {
		t.Errorf("closed parent of one: %v", err)
	}
	// An Open queue is vc-queue-delete's to refuse, with its own message.
	if err := CheckQueueDelete(n["p"], n); err != nil {
		t.Errorf("open parent: %v", err)
	}
	if err := CheckQueueDelete(closed(n["leaf"].DeepCopy()), n); err != nil {
		t.Errorf("closed leaf: %v", err)
	}
}

func TestQueueWriteRelevant(t *testing.T) {
	withWeight := func(q *v1beta1.Queue, w int32) *v1beta1.Queue { q.Spec.Weight = w; return q }
	for _, c := range []struct {
		name   string
		q, old *v1beta1.Queue
		want   bool
	}{
		{"a plain create under root", testQueue(t, "a", "", "", ""), nil, false},
		{"a create naming root", testQueue(t, "a", "root", "", ""), nil, false},
		{"a create naming another parent (a cycle of two)", testQueue(t, "a", "p", "", ""), nil, true},
		{"a create with a capability (children named before it)", testQueue(t, "a", "", "cpu=1", ""), nil, true},
		{"a create with a guarantee", testQueue(t, "a", "root", "", "cpu=1"), nil, true},
		{"root created with a parent it does not have", testQueue(t, "root", "p", "", ""), nil, false},
		{"root created with a capability", testQueue(t, "root", "", "cpu=1", ""), nil, true},
		{"the queue controller writes root for an empty parent", testQueue(t, "a", "root", "", ""), testQueue(t, "a", "", "", ""), false},
		{"a new weight", withWeight(testQueue(t, "a", "p", "cpu=1", ""), 3), testQueue(t, "a", "p", "cpu=1", ""), false},
		{"a move", testQueue(t, "a", "q", "", ""), testQueue(t, "a", "p", "", ""), true},
		{"a move back to root", testQueue(t, "a", "", "", ""), testQueue(t, "a", "p", "", ""), true},
		{"a new capability", testQueue(t, "a", "p", "cpu=2", ""), testQueue(t, "a", "p", "cpu=1", ""), true},
		{"a guarantee dropped", testQueue(t, "a", "p", "", ""), testQueue(t, "a", "p", "", "cpu=1"), true},
	} {
		if got := QueueWriteRelevant(c.q, c.old); got != c.want {
			t.Errorf("%s: relevant %v, want %v", c.name, got, c.want)
		}
	}
}
