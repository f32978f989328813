package nodeset

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// pinnedTo is the node a pod's required node affinity names, if any.
func pinnedTo(p *corev1.Pod) string {
	if p == nil || p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil ||
		p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// TestPinToNode: with pinToNode, status.ordinalToNode remembers where each
// ordinal runs, and a pod made again for it must run on that node (as
// Slinky's operator pins it); a node that no longer suits the pod (here a
// NoSchedule taint) or is gone loses its pins.
func TestPinToNode(t *testing.T) {
	e := start(t, "pin", 1)
	e.NewNodeSet("pin", 1, func(ns *slinkyv1beta1.NodeSet) { ns.Spec.PinToNode = true })
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	node := e.bindToNewNode("pin-0")
	// The node is ready: its not-ready taint (set by the API server's
	// admission on creation) goes, as the node lifecycle controller
	// removes it for a ready node.
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, "application/merge-patch+json", []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.MarkAllReady()
	e.Eventually("ordinal 0 pinned", func() (bool, string) {
		m := e.Get("pin").Status.OrdinalToNode
		return m["0"] == node, fmt.Sprint(m)
	})
	replace := func() *corev1.Pod {
		t.Helper()
		old := e.Pods()["pin-0"].UID
		if err := e.Kube.CoreV1().Pods(e.NS).Delete(e.Ctx, "pin-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
		var p *corev1.Pod
		e.Eventually("pin-0 made again", func() (bool, string) {
			p = e.Pods()["pin-0"]
			return p != nil && p.UID != old, names(e.Pods())
		})
		return p
	}
	if got := pinnedTo(replace()); got != node {
		t.Fatalf("new pod pinned to %q, want %s", got, node)
	}

	// A NoSchedule taint the pod does not tolerate: the pin goes.
	taint := `{"spec":{"taints":[{"key":"maintenance","effect":"NoSchedule"}]}}`
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, "application/merge-patch+json", []byte(taint), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("pin dropped", func() (bool, string) {
		m := e.Get("pin").Status.OrdinalToNode
		return len(m) == 0, fmt.Sprint(m)
	})
	if got := pinnedTo(replace()); got != "" {
		t.Fatalf("new pod pinned to %q", got)
	}
}
