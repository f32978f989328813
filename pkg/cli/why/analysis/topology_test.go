package analysis

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/joborder"
)

// heldWorld: one node of 2 CPUs, nothing running; held (Inqueue, cpu=2,
// hard tier 0: no HyperNode reaches it) and train (Pending, cpu=1).
func heldWorld(t *testing.T, conf string) *Snapshot {
	t.Helper()
	s := base()
	s.Nodes, s.NodesRead, s.AllPodsRead, s.HyperNodesRead = []corev1.Node{node("n1", "cpu=2")}, true, true, true
	pg := group("train", "default", 1, schedulingv1beta1.PodGroupPending, "cpu=1")
	s.PodGroup = &pg
	held := group("held", "default", 1, schedulingv1beta1.PodGroupInqueue, "cpu=2")
	held.Spec.NetworkTopology = &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: ptr.To(0)}
	s.PodGroups = []schedulingv1beta1.PodGroup{pg, held}
	if conf != "" {
		c, err := joborder.Parse(conf, "test")
		if err != nil {
			t.Fatal(err)
		}
		s.SchedulerConfig = &c
	}
	return s
}

// TestHeldByInqueueGroups: the overcommit plugin's admission, its factor
// read from the configuration, and off without the plugin or the enqueue
// action.
func TestHeldByInqueueGroups(t *testing.T) {
	const withOvercommit = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: overcommit\n"
	for _, tc := range []struct {
		name, conf string
		blocked    bool
	}{
		{name: "default configuration", blocked: true}, // factor 1.2: 2 + 1 > 2.4
		{name: "overcommit plugin", conf: withOvercommit, blocked: true},
		{name: "factor 1.5 admits it", conf: withOvercommit + "    arguments:\n      overcommit-factor: 1.5\n"}, // 2 + 1 <= 3
		{name: "no overcommit plugin", conf: "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n"},
		{name: "no enqueue action", conf: "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: overcommit\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Analyze(heldWorld(t, tc.conf))
			var got *Reason
			for i := range rep.Reasons {
				if rep.Reasons[i].Reason == HeldByInqueueGroups {
					got = &rep.Reasons[i]
				}
			}
			if (got != nil) != tc.blocked {
				t.Fatalf("HeldByInqueueGroups %v, want %v: %+v", got != nil, tc.blocked, rep.Reasons)
			}
			if got != nil && (len(got.Evidence) != 1 || got.Resources[0].Limit != "2.4" || got.Resources[0].Inqueue != "2") {
				t.Errorf("%+v", got)
			}
		})
	}
}
