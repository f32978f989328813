package nodeset

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// slurmTopology reads a node's Topology ("" when scontrol shows none).
func (e *env) slurmTopology(node string) string { return e.slurmNodeField(node, "Topology", "") }

// TestNodeTopologySlurm: as Slinky's operator, the controller sets a pod's
// Slurm node topology from its Kubernetes node's annotation
// topology.slinky.slurm.net/spec, where Slurm can (25.05 and later: the
// REST suite of 26.05, whose test Slurm has a tree topology, switches s0
// and s1). A topology Slurm does not know is refused by it and changes
// nothing; the annotation removed takes the node out of the topology it
// was given; a Slurm node whose Kubernetes node has no annotation keeps
// what slurm.conf gives it. A Slurm that cannot (24.11 over REST, 22.05
// with the commands) is said in a Warning event and left as it is.
func TestNodeTopologySlurm(t *testing.T) {
	e := startWithoutController(t, "tps", 2)
	e.runControllerWith(controllerOptions{events: true})
	e.NewNodeSet("tps", 2)
	e.Eventually("pods", func() (bool, string) { return len(e.Pods()) == 2, names(e.Pods()) })
	node := e.bindToNewNode("tps-1")
	e.bindToNewNode("tps-0") // no annotation
	e.MarkAllReady()
	before0, before1 := e.slurmTopology("tps-0"), e.slurmTopology("tps-1")
	e.setNodeReasons(node, map[string]string{slinkyv1beta1.AnnotationNodeTopologySpec: "default:s0"})

	if e.Slurm.Name() != "slurm-26.05" {
		e.Eventually("TopologyUnsupported Warning event", func() (bool, string) {
			ev := strings.Join(e.events("tps", "TopologyUnsupported"), "|")
			return strings.Contains(ev, "node topology cannot be written"), ev
		})
		if a, b := e.slurmTopology("tps-0"), e.slurmTopology("tps-1"); a != before0 || b != before1 {
			t.Fatalf("Slurm topology changed where it cannot be set: %q %q, was %q %q", a, b, before0, before1)
		}
		if _, ok := e.Pods()["tps-1"].Annotations["kubectl-vc.io/slurm-topology"]; ok {
			t.Fatal("a topology Slurm could not take recorded as set")
		}
		return
	}

	e.Eventually("tps-1 in switch s0", func() (bool, string) { v := e.slurmTopology("tps-1"); return v == "default:s0", v })
	e.Eventually("recorded on the pod", func() (bool, string) {
		v := e.Pods()["tps-1"].Annotations["kubectl-vc.io/slurm-topology"]
		return v == "default:s0", v
	})

	// A switch Slurm's topology does not have: Slurm refuses, nothing moves.
	e.setNodeReasons(node, map[string]string{slinkyv1beta1.AnnotationNodeTopologySpec: "default:nosuch"})
	e.Eventually("pod carries the new value", func() (bool, string) {
		v := e.Pods()["tps-1"].Annotations[slinkyv1beta1.AnnotationNodeTopologySpec]
		return v == "default:nosuch", v
	})
	time.Sleep(2 * time.Second) // two resyncs
	if v := e.slurmTopology("tps-1"); v != "default:s0" {
		t.Fatalf("refused topology: Slurm node at %q", v)
	}
	if v := e.Pods()["tps-1"].Annotations["kubectl-vc.io/slurm-topology"]; v != "default:s0" {
		t.Fatalf("refused topology recorded as set: %q", v)
	}

	// Removed: the node leaves the topology it was given.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, slinkyv1beta1.AnnotationNodeTopologySpec)
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("tps-1 out of the topology, record gone", func() (bool, string) {
		v := e.slurmTopology("tps-1")
		_, rec := e.Pods()["tps-1"].Annotations["kubectl-vc.io/slurm-topology"]
		return v == "" && !rec, fmt.Sprintf("%q record %v", v, rec)
	})
	if v := e.slurmTopology("tps-0"); v != before0 {
		t.Fatalf("tps-0, on a node without annotation, moved from %q to %q", before0, v)
	}
	out, err := e.Slurm.Scontrol(e.Ctx, "show", "topology")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scontrol show topology:\n%s", out)
}
