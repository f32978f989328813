package podgroup

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The podgroup controller's metrics, named with the volcano_ prefix of
// Volcano's own (volcano_podgroup_*), count what it did on a cluster of
// its own: groups created and updated, pods grouped, requests dropped
// (by kind), and the live pods still without a group.
func TestPodGroupMetrics(t *testing.T) {
	cp := ownCluster(t, controlplane.Controllers)
	m := startManager(t, cp, managerConfig{}, "--scheduler-name=volcano", "--podgroup-resync-period=0")
	ns := namespace(t)
	for _, name := range []string{"volcano_podgroup_groups_created_total", "volcano_podgroup_groups_updated_total",
		"volcano_podgroup_pods_grouped_total", "volcano_podgroup_ungrouped_pods"} {
		if _, found := m.metric(t, name); !found {
			t.Errorf("metric %s not exported", name)
		}
	}
	m.metricIs(t, 0, "volcano_podgroup_groups_created_total")

	bare := createPod(t, ns, "solo", podSpec("volcano", nil, nil))
	groupOf(t, bare, groupName(bare.UID))
	m.metricIs(t, 1, "volcano_podgroup_groups_created_total")
	m.metricIs(t, 1, "volcano_podgroup_pods_grouped_total")

	d := createDeployment(t, deployment(ns, "pair", 2, map[string]string{keys.GroupMinMember: "2"},
		template("pair", nil, podSpec("volcano", res("cpu", "100m"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	minMemberFromOwner(t, allIn(t, podsOf(t, ns, rs.UID, 2, nil), groupName(rs.UID)), 2)
	m.metricIs(t, 2, "volcano_podgroup_groups_created_total")
	m.metricIs(t, 3, "volcano_podgroup_pods_grouped_total")
	m.metricIs(t, 0, "volcano_podgroup_ungrouped_pods")
	before, _ := m.metric(t, "volcano_podgroup_groups_updated_total")
	patch(t, "Deployment", ns, d.Name, annotationsPatch(keys.GroupMinMember, "1"))
	groupUntil(t, ns, groupName(rs.UID), "minMember 1", func(pg *v1beta1.PodGroup) bool { return pg.Spec.MinMember == 1 })
	var after float64
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		after, _ = m.metric(t, "volcano_podgroup_groups_updated_total")
		return after > before, nil
	}); err != nil {
		t.Errorf("volcano_podgroup_groups_updated_total stayed %v after an update", after)
	}

	// A group the CRD refuses (the queue name breaks its schema) is
	// dropped after --max-requeue-num retries; the pod stays ungrouped.
	createPod(t, ns, "badqueue", podSpec("volcano", nil, nil), withAnnotations(keys.QueueName, "Not_A_Queue"))
	warningFor(t, ns, "badqueue", "PodGroupSyncFailed")
	m.metricIs(t, 1, "volcano_podgroup_requests_dropped_total", `kind="Pod"`)
	m.metricIs(t, 1, "volcano_podgroup_ungrouped_pods")
	m.metricIs(t, 2, "volcano_podgroup_groups_created_total")
}
