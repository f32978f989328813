package podgroup

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// An evicted pod lingers: the kubelet sets it Failed and leaves it, and the
// ReplicaSet controller makes a replacement. Such a pod holds no resources,
// so were it the pod the group is built from, the group would lose its cpu
// and memory. The group is built from a live pod even when an evicted one
// sorts first (the controller's choice among live pods is by name).
//
// No kubelet runs here, so the test sets the phase as the kubelet does on
// an eviction (Failed, reason Evicted); the rest is the real ReplicaSet
// controller. Pod names end in random letters, so the test evicts the pod
// that sorts first until an evicted pod sorts before every live one.
func TestEvictedPodIsNotTheTemplate(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	d := createDeployment(t, deployment(ns, "evict", 2, map[string]string{keys.GroupMinMember: "2"},
		template("evict", nil, podSpec("volcano", res("cpu", "500m", "memory", "128Mi"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	want := groupName(rs.UID)
	two := res("count/pods", "2", "pods", "2", "cpu", "1", "requests.cpu", "1", "memory", "256Mi", "requests.memory", "256Mi")
	pg := minMemberFromOwner(t, allIn(t, podsOf(t, ns, rs.UID, 2, nil), want), 2)
	equalResources(t, pg.Spec.MinResources, two)

	live := func(p *corev1.Pod) bool { return p.Status.Phase != corev1.PodFailed }
	evicted := 0
	for {
		all := podsOf(t, ns, rs.UID, 2+evicted, nil)
		if !live(all[0]) {
			break
		}
		if evicted == 5 {
			t.Fatalf("after %d evictions a live pod still sorts first", evicted)
		}
		// The scheduler writes the pod's status too (no node fits it), so
		// the pod read above may be stale: read it again on a conflict.
		pods := env.kube.CoreV1().Pods(ns)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			first, err := pods.Get(ctx, all[0].Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			first.Status.Phase = corev1.PodFailed
			first.Status.Reason = "Evicted"
			first.Status.Message = "The node was low on resource: memory."
			_, err = pods.UpdateStatus(ctx, first, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		evicted++
		// The ReplicaSet controller replaces it.
		podsOf(t, ns, rs.UID, 2+evicted, nil)
	}
	var livePods []*corev1.Pod
	for _, p := range podsOf(t, ns, rs.UID, 2+evicted, nil) {
		if live(p) {
			livePods = append(livePods, p)
		}
	}
	if len(livePods) != 2 {
		t.Fatalf("%d live pods, want 2", len(livePods))
	}
	allIn(t, livePods, want)

	// The ReplicaSet's updates (its status counts the evicted pods) have
	// rebuilt the group; one more, seen in the group, makes sure of it.
	patch(t, "Deployment", ns, d.Name, annotationsPatch(keys.RevocableZone, "rz1"))
	pg = groupUntil(t, ns, want, "re-synced from the ReplicaSet", func(pg *v1beta1.PodGroup) bool {
		return pg.Annotations[keys.RevocableZone] == "rz1"
	})
	equalResources(t, pg.Spec.MinResources, two)
}
