package nodeset

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// bindToNewNode creates a Node object and binds the pod to it, playing
// the scheduler; it returns the node's name.
func (e *env) bindToNewNode(pod string) string {
	e.T.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kube-" + pod + "-" + e.NS}}
	if _, err := e.Kube.CoreV1().Nodes().Create(e.Ctx, node, metav1.CreateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { _ = e.Kube.CoreV1().Nodes().Delete(e.Ctx, node.Name, metav1.DeleteOptions{}) })
	err := e.Kube.CoreV1().Pods(e.NS).Bind(e.Ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return node.Name
}

func (e *env) setUnschedulable(node string, v bool) {
	e.T.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, v)
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

// TestAdminDrainAndNodeCordon: a Slurm drain an administrator set, before
// the Kubernetes node was cordoned or while it was, is theirs: the cordon
// keeps their reason, the uncordon uncordons the pod but leaves their drain,
// and once they resume the node it stays in service (it used to be drained
// again as "pod cordoned", for ever). Each round ends with a scale-out,
// which the controller does in the same sync after the cordon rules, so the
// state is checked after a full sync.
func TestAdminDrainAndNodeCordon(t *testing.T) {
	e := start(t, "adm", 3)
	e.NewNodeSet("adm", 1)
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	node := e.bindToNewNode("adm-0")
	e.MarkAllReady()
	scontrol := func(args ...string) {
		if _, err := e.Slurm.Scontrol(e.Ctx, append([]string{"update", "nodename=adm-0"}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	cordoned := func() bool {
		_, ok := e.Pods()["adm-0"].Annotations[slinkyv1beta1.AnnotationPodCordon]
		return ok
	}
	scaleTo := func(n int) {
		e.PatchNodeSet("adm", fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
		e.Eventually(fmt.Sprintf("%d pods", n), func() (bool, string) { return len(e.Pods()) == n, names(e.Pods()) })
	}

	for round, adminFirst := range []bool{true, false} {
		t.Logf("round %d: admin drains %s the node cordon", round, map[bool]string{true: "before", false: "after"}[adminFirst])
		if adminFirst {
			scontrol("state=drain", "reason=bad dimm")
		}
		e.setUnschedulable(node, true)
		e.Eventually("pod cordoned for its node", func() (bool, string) {
			st := e.SlurmState("adm-0")
			return cordoned() && st != "IDLE", st
		})
		if !adminFirst {
			// The administrator takes over the drain: their reason.
			scontrol("state=drain", "reason=bad dimm")
		}
		if st := e.SlurmState("adm-0"); st != "DRAINED (bad dimm)" {
			t.Fatalf("administrator's drain: %s", st)
		}
		e.setUnschedulable(node, false)
		e.Eventually("pod uncordoned with its node", func() (bool, string) { return !cordoned(), "" })
		if st := e.SlurmState("adm-0"); st != "DRAINED (bad dimm)" {
			t.Fatalf("administrator's drain resumed by the controller: %s", st)
		}
		scontrol("state=resume")
		scaleTo(2 + round)
		if st := e.SlurmState("adm-0"); st != "IDLE" || cordoned() {
			t.Fatalf("after the administrator resumed: %s, pod cordoned %v", st, cordoned())
		}
	}
}
