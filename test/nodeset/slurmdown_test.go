package nodeset

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestSlurmUnreadableStopsSync: while Slurm's node states cannot be read,
// the controller acts on nothing (a stale view could take a busy node for
// an idle one): a scale-in cordons and drains no pod; status says why
// (condition SlurmReachable False) and keeps the last Slurm counts. Once
// Slurm answers again, the scale-in goes on.
func TestSlurmUnreadableStopsSync(t *testing.T) {
	e := startWithoutController(t, "sdown", 2)
	client, down := e.Slurm.Flaky(t)
	e.runControllerWith(controllerOptions{slurm: client})
	e.NewNodeSet("sdown", 2)
	e.Eventually("two ready pods, counted idle", func() (bool, string) {
		e.MarkAllReady()
		st := e.Get("sdown").Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})

	down.Store(true)
	e.PatchNodeSet("sdown", `{"spec":{"replicas":1}}`)
	gen := e.Get("sdown").Generation
	e.Eventually("the scale-in seen", func() (bool, string) {
		st := e.Get("sdown").Status
		return st.ObservedGeneration == gen, fmt.Sprintf("%+v", st)
	})
	for name, p := range e.Pods() {
		if _, ok := p.Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
			t.Fatalf("%s cordoned while Slurm could not be read", name)
		}
		if got := e.SlurmState(name); got != "IDLE" {
			t.Fatalf("%s drained while Slurm could not be read: %s", name, got)
		}
	}
	if n := len(e.Pods()); n != 2 {
		t.Fatalf("%d pods left, want 2", n)
	}
	st := e.Get("sdown").Status
	c := meta.FindStatusCondition(st.Conditions, "SlurmReachable")
	if c == nil || c.Status != "False" || c.Reason != "RefreshFailed" || st.SlurmIdle != 2 {
		t.Fatalf("status: condition %+v, idle %d", c, st.SlurmIdle)
	}

	down.Store(false)
	e.Eventually("scaled in once Slurm answers", func() (bool, string) {
		st := e.Get("sdown").Status
		c := meta.FindStatusCondition(st.Conditions, "SlurmReachable")
		return len(e.Pods()) == 1 && c != nil && c.Status == "True", names(e.Pods())
	})
}
