package rules

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// rl parses "cpu=4,memory=8Gi".
func rl(s string) corev1.ResourceList {
	if s == "" {
		return nil
	}
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

// rq is a queue with a parent and capability/deserved/guarantee lists.
func rq(name, parent, capability, deserved, guarantee string) *v1beta1.Queue {
	return &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.QueueSpec{
		Parent: parent, Capability: rl(capability), Deserved: rl(deserved), Guarantee: v1beta1.Guarantee{Resource: rl(guarantee)},
	}}
}

func flag(l string) string { return "--" + l }

func TestCheckQueueResources(t *testing.T) {
	for _, tc := range []struct {
		name, capability, deserved, guarantee string
		want                                  string // "" when valid
	}{
		{name: "empty"},
		{name: "all equal", capability: "cpu=2", deserved: "cpu=2", guarantee: "cpu=2"},
		{name: "same amount in other units", capability: "cpu=1500m", deserved: "cpu=1.5", guarantee: "cpu=1500m"},
		{name: "lists naming different resources bound nothing", capability: "memory=1Gi", deserved: "cpu=8", guarantee: "nvidia.com/gpu=2"},
		{name: "guarantee above deserved", deserved: "cpu=2", guarantee: "cpu=4",
			want: "--guarantee cpu=4 exceeds --deserved cpu=2: deserved must be at least the guarantee"},
		{name: "deserved above capability", capability: "cpu=4,memory=8Gi", deserved: "cpu=2,memory=16Gi",
			want: "--deserved memory=16Gi exceeds --capability memory=8Gi: capability must be at least the deserved"},
		{name: "guarantee above capability, no deserved", capability: "cpu=1", guarantee: "cpu=2",
			want: "--guarantee cpu=2 exceeds --capability cpu=1: capability must be at least the guarantee"},
		{name: "first resource in name order", capability: "cpu=1,memory=1Gi", deserved: "cpu=2,memory=2Gi",
			want: "--deserved cpu=2 exceeds --capability cpu=1"},
	} {
		q := rq("q", "", tc.capability, tc.deserved, tc.guarantee)
		err := CheckQueueResources(&q.Spec, flag)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckQueueInHierarchy(t *testing.T) {
	// root
	// ├── team (capability cpu=8, deserved cpu=6, guarantee cpu=4)
	// │   ├── t1 (guarantee cpu=1, deserved cpu=2)
	// │   └── t2 (guarantee cpu=2, deserved cpu=2, capability cpu=6)
	// │       └── t2a (capability cpu=5)
	// ├── open (no resources)
	// │   └── o1 (capability cpu=100)
	// └── mid (no capability)  under  top (capability cpu=10)
	base := func() map[string]*v1beta1.Queue {
		m := map[string]*v1beta1.Queue{}
		for _, q := range []*v1beta1.Queue{
			rq("root", "", "cpu=1", "cpu=1", "cpu=1"), // root bounds nothing
			rq("team", "root", "cpu=8", "cpu=6", "cpu=4"),
			rq("t1", "team", "", "cpu=2", "cpu=1"),
			rq("t2", "team", "cpu=6", "cpu=2", "cpu=2"),
			rq("t2a", "t2", "cpu=5", "", ""),
			rq("open", "", "", "", ""),
			rq("o1", "open", "cpu=100", "", ""),
			rq("top", "root", "cpu=10", "", ""),
			rq("mid", "top", "", "", ""),
		} {
			m[q.Name] = q
		}
		return m
	}
	for _, tc := range []struct {
		name string
		q    *v1beta1.Queue
		want string
	}{
		{"a new child within every bound", rq("t3", "team", "cpu=8", "cpu=2", "cpu=1"), ""},
		{"children's guarantees add up to more than the parent's", rq("t3", "team", "", "cpu=2", "cpu=2"),
			`--guarantee cpu=2 would make the guarantees of the children of queue "team" add up to cpu=5 (t1, t2, t3), more than its guarantee cpu=4`},
		{"children's deserved shares add up to more than the parent's", rq("t3", "team", "", "cpu=3", ""),
			`--deserved cpu=3 would make the deserved shares of the children of queue "team" add up to cpu=7`},
		{"a resource the parent does not set is not bounded by it", rq("t3", "team", "", "memory=64Gi", "memory=64Gi"), ""},
		{"a child's capability above its parent's", rq("t3", "team", "cpu=9", "", ""),
			`--capability cpu=9 exceeds the capability cpu=8 of queue "team" above it`},
		{"the nearest ancestor that sets a capability bounds it", rq("m1", "mid", "cpu=11", "", ""),
			`--capability cpu=11 exceeds the capability cpu=10 of queue "top" above it`},
		{"within the nearest ancestor's capability", rq("m1", "mid", "cpu=10", "", ""), ""},
		{"root bounds nothing", rq("big", "root", "cpu=1000", "cpu=1000", "cpu=1000"), ""},
		{"a parent without resources bounds nothing", rq("o2", "open", "cpu=1000", "cpu=5", "cpu=5"), ""},
		{"a parent lowering its capability below a queue under it", rq("t2", "team", "cpu=4", "cpu=2", "cpu=2"),
			`--capability cpu=4 is below the capability cpu=5 of queue "t2a" under it`},
		{"a parent lowering its guarantee below its children's", rq("team", "root", "cpu=8", "cpu=6", "cpu=2"),
			`--guarantee cpu=2 is less than the guarantees of its children, cpu=3 in all (t1, t2)`},
		{"a parent lowering its deserved below its children's", rq("team", "root", "cpu=8", "cpu=3", "cpu=3"),
			`--deserved cpu=3 is less than the deserved shares of its children, cpu=4 in all (t1, t2)`},
		{"a parent setting a capability below a grandchild's (its child sets none)", rq("open", "root", "cpu=50", "", ""),
			`--capability cpu=50 is below the capability cpu=100 of queue "o1" under it`},
		{"moving a queue under a parent whose guarantee it would overflow", rq("t2a", "team", "", "", "cpu=2"),
			`would make the guarantees of the children of queue "team" add up to cpu=5 (t1, t2, t2a)`},
		{"a sum its siblings broke already is not this queue's doing", rq("t3", "team", "", "", "memory=1Gi"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs := base()
			if tc.name == "a sum its siblings broke already is not this queue's doing" {
				qs["t1"].Spec.Guarantee.Resource = rl("cpu=10")
			}
			err := CheckQueueInHierarchy(tc.q, qs, flag)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
	// A hierarchy with a cycle in it does not hang the checks.
	qs := base()
	qs["x"], qs["y"] = rq("x", "y", "cpu=1", "", ""), rq("y", "x", "cpu=2", "", "")
	if err := CheckQueueInHierarchy(rq("x", "y", "cpu=3", "", ""), qs, flag); err == nil || !strings.Contains(err.Error(), `queue "y" above it`) {
		t.Errorf("in a cycle: got %v", err)
	}
}
