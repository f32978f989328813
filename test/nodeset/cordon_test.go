package nodeset

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
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

// setNodeReasons gives a Node the annotation and conditions a test words
// its drain with: a JSON merge patch of its annotations, then its
// conditions written to the status as a node agent writes them.
func (e *env) setNodeReasons(node string, annotations map[string]string, conds ...corev1.NodeCondition) {
	e.T.Helper()
	if len(annotations) > 0 {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
		if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			e.T.Fatal(err)
		}
	}
	if len(conds) > 0 {
		for i := range conds {
			conds[i].LastTransitionTime = metav1.Now()
		}
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
		if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			e.T.Fatal(err)
		}
	}
}

// TestNodeCordonReason: the Slurm drain of a cordoned Kubernetes node's pod
// says why, as Slinky's operator says it: the node's
// nodeset.slinky.slurm.net/node-cordon-reason annotation first (made one
// line, cut to 256 characters), else the True conditions of the types
// --propagated-node-conditions names, "(reason: message)" joined by "; ",
// else the controller's own words. Uncordoned, each node is resumed: the
// reasons are the controller's, whatever they say.
func TestNodeCordonReason(t *testing.T) {
	e := &env{nodesets.StartWithoutController(t, cp, "why", 4)}
	e.RunController("--propagated-node-conditions=GPUProblem,CPUProblem")
	e.NewNodeSet("why", 4)
	e.Eventually("4 pods", func() (bool, string) { return len(e.Pods()) == 4, names(e.Pods()) })
	nodes := map[string]string{}
	for i := range 4 {
		pod := fmt.Sprintf("why-%d", i)
		nodes[pod] = e.bindToNewNode(pod)
	}
	e.MarkAllReady()
	problem := func(typ, reason, msg string, st corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: corev1.NodeConditionType(typ), Status: st, Reason: reason, Message: msg}
	}
	// why-0: the annotation beats the conditions; its line end becomes a space.
	e.setNodeReasons(nodes["why-0"], map[string]string{slinkyv1beta1.AnnotationNodeCordonReason: "GPU ECC error\ndetected"},
		problem("GPUProblem", "GpuCountMismatch", "3 of 4 GPUs", corev1.ConditionTrue))
	// why-1: the True conditions of the listed types, in the flag's order;
	// a False one and a type not listed say nothing.
	e.setNodeReasons(nodes["why-1"], nil,
		problem("KernelDeadlock", "Hung", "task blocked", corev1.ConditionTrue),
		problem("CPUProblem", "BadCPU", "CPU 17: Machine Check Exception", corev1.ConditionTrue),
		problem("GPUProblem", "GpuCountMismatch", "3 of 4 GPUs", corev1.ConditionTrue),
		problem("MemoryProblem", "", "", corev1.ConditionFalse))
	// why-2: a hostile annotation: 100 KB with control characters, cut to
	// 256 characters without them.
	e.setNodeReasons(nodes["why-2"], map[string]string{slinkyv1beta1.AnnotationNodeCordonReason: "\a" + strings.Repeat("é", 50_000)})
	// why-3: nothing said: the controller's words.
	want := map[string]string{
		"why-0": "DRAINED (kubectl-vc: GPU ECC error detected)",
		"why-1": "DRAINED (kubectl-vc: (GpuCountMismatch: 3 of 4 GPUs); (BadCPU: CPU 17: Machine Check Exception))",
		"why-2": "DRAINED (kubectl-vc: " + strings.Repeat("é", 256) + ")",
		"why-3": "DRAINED (kubectl-vc: kubernetes node " + nodes["why-3"] + " cordoned)",
	}
	for _, n := range nodes {
		e.setUnschedulable(n, true)
	}
	for pod, w := range want {
		e.Eventually(pod+" drained with its reason", func() (bool, string) {
			st := e.SlurmState(pod)
			return st == w, st
		})
	}
	for _, n := range nodes {
		e.setUnschedulable(n, false)
	}
	for pod := range want {
		e.Eventually(pod+" resumed", func() (bool, string) {
			st := e.SlurmState(pod)
			_, cordoned := e.Pods()[pod].Annotations[slinkyv1beta1.AnnotationPodCordon]
			return st == "IDLE" && !cordoned, fmt.Sprintf("%s, pod cordoned %v", st, cordoned)
		})
	}
}

// TestPropagatedNodeConditionsRefused: a condition type that cannot be one
// stops the controller's flags, as serve would be stopped.
func TestPropagatedNodeConditionsRefused(t *testing.T) {
	for _, arg := range []string{"--propagated-node-conditions=GPUProblem,", "--propagated-node-conditions=" + strings.Repeat("x", 317)} {
		if _, err := framework.Configure("nodeset", arg); err == nil || !strings.Contains(err.Error(), "--propagated-node-conditions") {
			t.Errorf("%.60s: %v, want refused", arg, err)
		}
	}
}

// TestNodeTopologyCopied: as Slinky's operator, the controller copies a
// pod's Kubernetes node annotation topology.slinky.slurm.net/spec to the
// pod (slurmd's image registers its Slurm node in that topology), follows
// its changes, and copies an empty value when the node has none; a value
// past 4 KiB is not copied (the pod keeps the last one).
func TestNodeTopologyCopied(t *testing.T) {
	e := start(t, "topo", 1)
	e.NewNodeSet("topo", 1)
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	node := e.bindToNewNode("topo-0")
	topology := func(want string) {
		t.Helper()
		e.Eventually(fmt.Sprintf("pod topology %q", want), func() (bool, string) {
			v, ok := e.Pods()["topo-0"].Annotations[slinkyv1beta1.AnnotationNodeTopologySpec]
			return ok && v == want, fmt.Sprintf("%v %q", ok, v)
		})
	}
	topology("")
	e.setNodeReasons(node, map[string]string{slinkyv1beta1.AnnotationNodeTopologySpec: "topo-switch:s2,topo-block:b2"})
	topology("topo-switch:s2,topo-block:b2")
	e.setNodeReasons(node, map[string]string{slinkyv1beta1.AnnotationNodeTopologySpec: strings.Repeat("s", 5000)})
	e.setNodeReasons(node, map[string]string{"other": "x"}) // a later change: the sync ran
	time.Sleep(2 * time.Second)                             // two resyncs
	topology("topo-switch:s2,topo-block:b2")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, slinkyv1beta1.AnnotationNodeTopologySpec)
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	topology("")
}

// slurmNodeField reads a field of a node with scontrol, apart from the
// controller: def when scontrol shows none.
func (e *env) slurmNodeField(node, field, def string) string {
	e.T.Helper()
	out, err := e.Slurm.Scontrol(e.Ctx, "show", "node", node, "-o")
	if err != nil {
		e.T.Fatal(err)
	}
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, field+"="); ok {
			return v
		}
	}
	return def
}

// slurmFeatures reads a node's AvailableFeatures.
func (e *env) slurmFeatures(node string) string {
	return e.slurmNodeField(node, "AvailableFeatures", "?")
}

// TestNodeFeatures: as Slinky's operator, the controller sets a pod's Slurm
// node features from its Kubernetes node's annotation
// features.slinky.slurm.net/spec, each prefixed "k8s/", replacing only the
// "k8s/" ones: a feature an administrator set stays. Names Slurm would
// read as operators are dropped; the annotation removed removes them.
func TestNodeFeatures(t *testing.T) {
	e := start(t, "feat", 1)
	e.NewNodeSet("feat", 1)
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	node := e.bindToNewNode("feat-0")
	e.MarkAllReady()
	if _, err := e.Slurm.Scontrol(e.Ctx, "update", "nodename=feat-0", "availablefeatures=ib", "activefeatures=ib"); err != nil {
		t.Fatal(err)
	}
	features := func(want string) {
		t.Helper()
		e.Eventually("Slurm features "+want, func() (bool, string) { f := e.slurmFeatures("feat-0"); return f == want, f })
	}
	e.setNodeReasons(node, map[string]string{slinkyv1beta1.AnnotationNodeFeaturesSpec: "nn-75bf,GPU, GPU,a|b,x y"})
	features("ib,k8s/GPU,k8s/nn-75bf")
	e.setNodeReasons(node, map[string]string{slinkyv1beta1.AnnotationNodeFeaturesSpec: "GPU"})
	features("ib,k8s/GPU")
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, slinkyv1beta1.AnnotationNodeFeaturesSpec)
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	features("ib")
}
