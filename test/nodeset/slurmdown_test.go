package nodeset

import (
	"fmt"
	"os/exec"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// lookPath finds a command on PATH or fails the test.
func lookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestSlurmUnreadableStopsSync: while Slurm's node states cannot be read,
// the controller acts on nothing (a stale view could take a busy node for
// an idle one): a scale-in cordons and drains no pod; status says why
// (condition SlurmReachable False) and keeps the last Slurm counts. Once
// Slurm answers again, the scale-in goes on.
func TestSlurmUnreadableStopsSync(t *testing.T) {
	e := startWithoutController(t, "sdown", 2)
	client, down := e.slurm.Flaky(t)
	e.runControllerWith(controllerOptions{slurm: client})
	e.newNodeSet("sdown", 2)
	e.eventually("two ready pods, counted idle", func() (bool, string) {
		e.markAllReady()
		st := e.get("sdown").Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Sprintf("%+v", st)
	})

	down.Store(true)
	e.patchNodeSet("sdown", `{"spec":{"replicas":1}}`)
	gen := e.get("sdown").Generation
	e.eventually("the scale-in seen", func() (bool, string) {
		st := e.get("sdown").Status
		return st.ObservedGeneration == gen, fmt.Sprintf("%+v", st)
	})
	for name, p := range e.pods() {
		if _, ok := p.Annotations[slinkyv1beta1.AnnotationPodCordon]; ok {
			t.Fatalf("%s cordoned while Slurm could not be read", name)
		}
		if got := e.slurmState(name); got != "IDLE" {
			t.Fatalf("%s drained while Slurm could not be read: %s", name, got)
		}
	}
	if n := len(e.pods()); n != 2 {
		t.Fatalf("%d pods left, want 2", n)
	}
	st := e.get("sdown").Status
	c := meta.FindStatusCondition(st.Conditions, "SlurmReachable")
	if c == nil || c.Status != "False" || c.Reason != "RefreshFailed" || st.SlurmIdle != 2 {
		t.Fatalf("status: condition %+v, idle %d", c, st.SlurmIdle)
	}

	down.Store(false)
	e.eventually("scaled in once Slurm answers", func() (bool, string) {
		st := e.get("sdown").Status
		c := meta.FindStatusCondition(st.Conditions, "SlurmReachable")
		return len(e.pods()) == 1 && c != nil && c.Status == "True", names(e.pods())
	})
}
