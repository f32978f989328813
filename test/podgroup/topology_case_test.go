package podgroup

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// Volcano reads volcano.sh/network-topology-mode without regard to case:
// "Soft" is soft and "HARD" is hard, written in the group in lower case,
// and neither is reported as invalid. A Deployment's template carries the
// annotation, as users write it.
func TestNetworkTopologyModeIgnoresCase(t *testing.T) {
	ns := namespace(t)
	soft := createDeployment(t, deployment(ns, "soft", 1, nil,
		template("soft", map[string]string{keys.NetworkTopologyMode: "Soft"}, podSpec("volcano", nil, nil))))
	hard := createPod(t, ns, "hard", podSpec("volcano", nil, nil), withAnnotations(keys.NetworkTopologyMode, "HARD"))

	rs := replicaSet(t, soft, "1", "made", nil)
	softPod := podsOf(t, ns, rs.UID, 1, nil)[0]
	if nt := groupOf(t, softPod, groupName(rs.UID)).Spec.NetworkTopology; nt == nil || nt.Mode != v1beta1.SoftNetworkTopologyMode {
		t.Errorf("mode Soft: %+v, want soft", nt)
	}
	if nt := groupOf(t, hard, groupName(hard.UID)).Spec.NetworkTopology; nt == nil || nt.Mode != v1beta1.HardNetworkTopologyMode {
		t.Errorf("mode HARD: %+v, want hard", nt)
	}
	// A mode that is invalid in any case is still reported, so the
	// warning is working while the two above have none.
	bad := createPod(t, ns, "bad", podSpec("volcano", nil, nil), withAnnotations(keys.NetworkTopologyMode, "Strict"))
	groupOf(t, bad, groupName(bad.UID))
	warningFor(t, ns, "bad", "InvalidNetworkTopology")
	for _, name := range []string{softPod.Name, "hard"} {
		list, err := env.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == "InvalidNetworkTopology" {
				t.Errorf("pod %s: %s", name, e.Message)
			}
		}
	}
}
