package nodeset

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

func TestRevisionHashAndData(t *testing.T) {
	ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "x", UID: "u"}}
	d1, err := revisionData(ns)
	if err != nil {
		t.Fatal(err)
	}
	if string(d1) == "" || containsNull(string(d1)) {
		t.Fatalf("data has nulls: %s", d1)
	}
	// Replicas is not part of a revision.
	ns.Spec.Replicas = new(int32)
	d2, _ := revisionData(ns)
	if !sameRevision(d1, d2) || revisionHash(d1, 0) != revisionHash(d2, 0) {
		t.Fatal("replicas changed the revision")
	}
	// The template is.
	ns.Spec.Template.PodMetadata.Labels = map[string]string{"a": "b"}
	d3, _ := revisionData(ns)
	if sameRevision(d1, d3) || revisionHash(d1, 0) == revisionHash(d3, 0) {
		t.Fatal("template change not seen")
	}
	// The collision count changes the hash, and the revision name with it.
	if revisionHash(d1, 0) == revisionHash(d1, 1) {
		t.Fatal("collision count ignored")
	}
	r := newRevision(ns, d1, 3, 0)
	if r.Name != "a-"+revisionHash(d1, 0) || r.Labels[revisionHashLabel] != revisionHash(d1, 0) || r.Revision != 3 ||
		!metav1.IsControlledBy(r, ns) || r.Labels["a"] != "b" || r.Labels[slinkyv1beta1.LabelAppInstance] != "a" {
		t.Fatalf("revision: %+v", r.ObjectMeta)
	}
	// The hash is the one of the Kubernetes workload controllers
	// (history.HashControllerRevision): FNV-32 of the data, then the
	// collision count in decimal, vowel-free encoded.
	if got := revisionHash([]byte(`{}`), 0); got != "cccc864bc" {
		t.Fatalf("hash of {} with count 0 = %s", got)
	}
}

// TestSameRevision: revision data is compared by what it says, in any of
// the shapes it has had.
func TestSameRevision(t *testing.T) {
	ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	ns.Spec.Template.PodMetadata.Labels = map[string]string{"team": "hpc"}
	ns.Spec.Slurmd = corev1.Container{Name: "slurmd", Image: "slurmd:25.05"}
	ours, err := revisionData(ns)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		data string
		same bool
	}{
		// Slinky's operator: "$patch" keys, nulls kept, keys in any order.
		"slinky": {`{"spec":{"extraConf":"","oversubscribeNode":false,"ordinalPadding":0,"slurmd":{"$patch":"replace","image":"slurmd:25.05","name":"slurmd","resources":{}},` +
			`"template":{"$patch":"replace","metadata":{"labels":{"team":"hpc"}},"spec":{"containers":null}}}}`, true},
		// This controller before: no ordinalPadding nor oversubscribeNode.
		"earlier":       {`{"spec":{"logfile":{"name":"","resources":{}},"slurmd":{"image":"slurmd:25.05","name":"slurmd","resources":{}},"template":{"metadata":{"labels":{"team":"hpc"}},"spec":{}}}}`, true},
		"other image":   {`{"spec":{"slurmd":{"image":"slurmd:25.11","name":"slurmd"},"template":{"metadata":{"labels":{"team":"hpc"}}}}}`, false},
		"other padding": {`{"spec":{"ordinalPadding":2,"slurmd":{"image":"slurmd:25.05","name":"slurmd"},"template":{"metadata":{"labels":{"team":"hpc"}}}}}`, false},
		"unreadable":    {`{"spec":[]}`, false},
	} {
		if got := sameRevision(ours, []byte(tc.data)); got != tc.same {
			t.Errorf("%s: same = %v, want %v", name, got, tc.same)
		}
	}
}

func containsNull(s string) bool {
	for i := 0; i+4 <= len(s); i++ {
		if s[i:i+4] == "null" {
			return true
		}
	}
	return false
}

func TestRevisionsToPrune(t *testing.T) {
	var revs []*appsv1.ControllerRevision
	for i := 1; i <= 5; i++ {
		revs = append(revs, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("r", i)}, Revision: int64(i)})
	}
	// r5 is the update revision, r2 still runs a pod: with limit 1 the
	// newest old one (r4) stays, r1 and r3 go; r2 stays although old.
	got := revisionsToPrune(revs, map[string]bool{"r5": true, "r2": true}, 1)
	if len(got) != 2 || got[0].Name != "r1" || got[1].Name != "r3" {
		t.Fatalf("pruned %v", got)
	}
	if got := revisionsToPrune(revs, map[string]bool{"r5": true}, 10); len(got) != 0 {
		t.Fatalf("under the limit pruned %v", got)
	}
	if got := revisionsToPrune(revs, map[string]bool{"r5": true}, 0); len(got) != 4 {
		t.Fatalf("limit 0 must keep only live revisions, pruned %d", len(got))
	}
}

func TestOrdinals(t *testing.T) {
	ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "w"}}
	pod := func(n string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}} }
	for name, want := range map[string]int{"w-0": 0, "w-12": 12, "w-x": -1, "w-1-0": -1, "x-1": -1, "w-": -1, "w-+1": -1} {
		if got := ordinalOf(ns, pod(name)); got != want {
			t.Errorf("ordinalOf(%s) = %d, want %d", name, got, want)
		}
	}
	ns.Spec.OrdinalPadding = 3
	if podName(ns, 7) != "w-007" || ordinalOf(ns, pod("w-007")) != 7 {
		t.Fatal("padding")
	}
	got := lowestFreeOrdinals(ns, []*corev1.Pod{pod("w-000"), pod("w-002"), pod("w-005")}, 3)
	if fmt.Sprint(got) != "[1 3 4]" {
		t.Fatalf("lowest free: %v", got)
	}
}
