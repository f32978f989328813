package rules

import (
	"testing"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestPodGroupCounts(t *testing.T) {
	var c PodGroupCounts
	for _, p := range []v1beta1.PodGroupPhase{
		v1beta1.PodGroupInqueue, v1beta1.PodGroupPending, v1beta1.PodGroupPending,
		v1beta1.PodGroupRunning, v1beta1.PodGroupUnknown, v1beta1.PodGroupCompleted,
		"",         // not yet seen by a scheduler
		"Sleeping", // no Volcano phase
	} {
		c.Add(p)
	}
	want := PodGroupCounts{Inqueue: 1, Pending: 2, Running: 1, Unknown: 1, Completed: 1, Total: 8}
	if c != want {
		t.Fatalf("counts %+v, want %+v", c, want)
	}
	// A podgroup without a phase still holds a Closing queue open.
	if c.Active() != 7 {
		t.Errorf("Active() = %d, want 7 (all but the completed one)", c.Active())
	}
	st := v1beta1.QueueStatus{Inqueue: 1, Pending: 2, Running: 1, Unknown: 1, Completed: 1}
	fromStatus := FromQueueStatus(st)
	if fromStatus.Total != 6 {
		t.Errorf("total from status %d, want 6", fromStatus.Total)
	}
	if !c.SamePhases(fromStatus) {
		t.Errorf("same phases expected: %+v vs %+v", c, fromStatus)
	}
	st.Running = 2
	if c.SamePhases(FromQueueStatus(st)) {
		t.Error("different running counts compared equal")
	}
}
