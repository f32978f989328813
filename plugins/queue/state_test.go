package queue

import (
	"testing"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestStateTable checks every cell of the transition table of SPEC §4.
func TestStateTable(t *testing.T) {
	const (
		open, closing, closed, unknown = v1beta1.QueueStateOpen, v1beta1.QueueStateClosing, v1beta1.QueueStateClosed, v1beta1.QueueStateUnknown
		o, c, s                        = busv1alpha1.OpenQueueAction, busv1alpha1.CloseQueueAction, busv1alpha1.SyncQueueAction
	)
	cases := []struct {
		from      v1beta1.QueueState
		podGroups int
		action    string
		want      v1beta1.QueueState
	}{
		{"", 0, s, open}, {"", 1, c, closing},
		{open, 0, o, open}, {open, 0, c, closed}, {open, 2, c, closing}, {open, 2, s, open},
		{closing, 1, o, open}, {closing, 0, c, closed}, {closing, 1, c, closing}, {closing, 0, s, closed}, {closing, 3, s, closing},
		{closed, 0, o, open}, {closed, 0, c, closed}, {closed, 4, s, closed},
		{unknown, 0, o, open}, {unknown, 0, c, closed}, {unknown, 1, c, closing}, {unknown, 0, s, unknown}, {unknown, 1, s, unknown},
	}
	for _, tc := range cases {
		got, err := NewState(tc.from, tc.podGroups).Execute(tc.action)
		if err != nil || got != tc.want {
			t.Errorf("%q with %d podgroups, %s: got %q, %v; want %q", tc.from, tc.podGroups, tc.action, got, err, tc.want)
		}
	}
	for _, st := range []v1beta1.QueueState{open, closing, closed, unknown} {
		if _, err := NewState(st, 0).Execute("Explode"); err == nil {
			t.Errorf("%s accepted an unknown action", st)
		}
	}
}
