package topology

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
)

// topo builds the world's two racks under a spine: rack-a (2 nodes of 2
// CPUs), rack-b (1 node of 2 CPUs), tier names rack and spine.
func topo(w *world) (rackA, rackB, spine string) {
	a1, a2 := w.node("a1", "2", nil), w.node("a2", "2", nil)
	b1 := w.node("b1", "2", nil)
	rackA = w.hyperNode("rack-a", 1, "rack", exact(nodeM, a1), exact(nodeM, a2))
	rackB = w.hyperNode("rack-b", 1, "rack", exact(nodeM, b1))
	spine = w.hyperNode("spine", 2, "spine", exact(hnM, rackA), exact(hnM, rackB))
	return
}

// Each constraint field as 'why' reads it, with a configuration that
// enables the network-topology-aware plugin: a tier no HyperNode reaches
// and one whose HyperNodes lack the idle CPUs block with the numbers; a
// tier name resolves to its tier; an unknown tier name and soft mode are
// notes, never blocks; without the plugin the constraint is not enforced.
func TestWhyConstraintFields(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns(), w.queue()
	rackA, rackB, spine := topo(w)
	hard := func(tier *int, name string) *schedulingv1beta1.NetworkTopologySpec {
		return &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: tier, HighestTierName: name}
	}
	group(t, ns, "tier0", q, "1", hard(ptr.To(0), ""), schedulingv1beta1.PodGroupInqueue)
	group(t, ns, "big", q, "5", hard(ptr.To(1), ""), schedulingv1beta1.PodGroupInqueue)
	group(t, ns, "fits", q, "4", hard(ptr.To(1), ""), schedulingv1beta1.PodGroupInqueue)
	group(t, ns, "byname", q, "5", hard(nil, "spine"), schedulingv1beta1.PodGroupInqueue)
	group(t, ns, "unknown", q, "1", hard(nil, "nowhere"), schedulingv1beta1.PodGroupInqueue)
	group(t, ns, "soft", q, "1", &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode, HighestTierAllowed: ptr.To(1)}, schedulingv1beta1.PodGroupInqueue)
	conf := "--scheduler-config-file=" + env.withPlugin

	rep, code := why(t, env.cli.Admin, "podgroup", "tier0", "-n", ns, conf)
	has(t, rep, analysis.TopologyNoFit, true, "no HyperNode has tier 0 or lower (tiers in use:", "hard, highest tier 0 (podgroup spec.networkTopology)")
	if code != 1 {
		t.Errorf("tier0: exit %d, want 1", code)
	}
	rep, _ = why(t, env.cli.Admin, "podgroup", "big", "-n", ns, conf)
	has(t, rep, analysis.TopologyNoFit, true, "no HyperNode of tier 1 or lower has the idle resources for the group's minimum (cpu=5)",
		"HyperNode "+rackA+" (tier 1, nodes "+w.n("a1")+","+w.n("a2")+"): idle cpu 4 < 5", "HyperNode "+rackB+" (tier 1, nodes "+w.n("b1")+"): idle cpu 2 < 5")
	rep, _ = why(t, env.cli.Admin, "podgroup", "fits", "-n", ns, conf)
	if reason(rep, analysis.TopologyNoFit) != nil || checked(rep, "topology", "HyperNode "+rackA+" (tier 1) has idle cpu=4") == "" {
		t.Errorf("fits: %+v", rep)
	}
	rep, _ = why(t, env.cli.Admin, "podgroup", "byname", "-n", ns, conf)
	if reason(rep, analysis.TopologyNoFit) != nil || checked(rep, "topology", `hard, highest tier "spine" = tier 2`) == "" || checked(rep, "topology", "HyperNode "+spine) == "" {
		t.Errorf("byname: %+v", rep)
	}
	rep, _ = why(t, env.cli.Admin, "podgroup", "unknown", "-n", ns, conf)
	has(t, rep, analysis.TopologyIgnored, false, `highestTierName "nowhere"`, "matches no HyperNode's tierName", "rack=1", "spine=2", "as if it had no constraint")
	rep, _ = why(t, env.cli.Admin, "podgroup", "soft", "-n", ns, conf)
	has(t, rep, analysis.TopologySoft, false, "soft mode", "a preference, never a wait")
	if reason(rep, analysis.TopologyNoFit) != nil {
		t.Errorf("soft blocked: %+v", rep)
	}
	// Without the plugin hard mode is not enforced: a note, no block.
	rep, _ = why(t, env.cli.Admin, "podgroup", "tier0", "-n", ns, "--scheduler-config-file="+env.withoutPlugin)
	has(t, rep, analysis.TopologyNotEnforced, false, "has no network-topology-aware plugin", env.withoutPlugin)
	if reason(rep, analysis.TopologyNoFit) != nil {
		t.Errorf("blocked without the plugin: %+v", rep)
	}
}

// A Volcano Job's own constraint and its task's partition constraint:
// each partition of 2 pods of 1.5 CPUs must fit one HyperNode of tier 1.
func TestWhyJobTasks(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns(), w.queue()
	rackA, rackB, _ := topo(w)
	podSpec := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w", Image: "busybox:1.36",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}}}
	_, err := env.vc.BatchV1alpha1().Jobs(ns).Create(context.Background(), &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns},
		Spec: batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: q, MinAvailable: 4,
			NetworkTopology: &batchv1alpha1.NetworkTopologySpec{Mode: "soft"},
			Tasks: []batchv1alpha1.TaskSpec{{Name: "worker", Replicas: 4, Template: podSpec,
				PartitionPolicy: &batchv1alpha1.PartitionPolicySpec{TotalPartitions: 2, PartitionSize: 3,
					NetworkTopology: &batchv1alpha1.NetworkTopologySpec{Mode: "hard", HighestTierAllowed: ptr.To(1)}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep, code := why(t, env.cli.Admin, "job", "train", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	has(t, rep, analysis.TopologySoft, false, "job spec.networkTopology")
	has(t, rep, analysis.TopologyNoFit, true, "one partition of task worker (3 pod(s)) (cpu=4500m)", "task worker partitionPolicy.networkTopology",
		"HyperNode "+rackA+" (tier 1, nodes "+w.n("a1")+","+w.n("a2")+"): idle cpu 4 < 4500m", "HyperNode "+rackB)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
}

// The pod annotations volcano.sh/network-topology-mode and
// volcano.sh/network-topology-highest-tier: serve's podgroup controller
// makes the pod's PodGroup with that constraint, and 'why pod' reads it
// from there, saying where it came from.
func TestWhyPodAnnotations(t *testing.T) {
	w := newWorld(t)
	ns := w.ns()
	topo(w)
	cptest.StartServe(t, env.cli.Bin, env.kubeconfig, "--controllers=podgroup")
	p := pod(t, ns, "solo", "", "5", "", keys.NetworkTopologyMode, "hard", keys.NetworkTopologyHighestTier, "1")
	ctx := context.Background()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cur, err := env.kube.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil || cur.Annotations[keys.KubeGroupName] == "" {
			return false, err
		}
		pg, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, cur.Annotations[keys.KubeGroupName], metav1.GetOptions{})
		return err == nil && pg.Spec.NetworkTopology != nil, nil
	}); err != nil {
		t.Fatalf("no PodGroup with the pod's network topology: %v", err)
	}
	rep, _ := why(t, env.cli.Admin, "pod", "solo", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	// Serve's controller sets no minResources here: the pod's requests
	// (5 CPUs) are the need, more than any rack has idle.
	has(t, rep, analysis.TopologyNoFit, true, "from the pods' volcano.sh/network-topology-* annotations", "(cpu=5)", "hard, highest tier 1")
}

// The tree's defects: two parents and a cycle block every topology job
// (why) and FAIL doctor; a member matching nothing and a tier not above
// its member's are named on their lines (tree) and WARN in doctor.
func TestDefects(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns(), w.queue()
	n1 := w.node("n1", "2", nil)
	r1 := w.hyperNode("r1", 1, "", exact(nodeM, n1))
	s1 := w.hyperNode("s1", 2, "", exact(hnM, r1))
	s2 := w.hyperNode("s2", 2, "", exact(hnM, r1), label("rack", "none-"+w.name))
	c1 := w.hyperNode("c1", 3, "", exact(hnM, w.n("c2")))
	c2 := w.hyperNode("c2", 4, "", exact(hnM, c1))
	low := w.hyperNode("low", 1, "", exact(hnM, r1+"-ghost"), exact(hnM, w.n("r2")))
	w.hyperNode("r2", 1, "", exact(nodeM, n1))

	text := env.cli.MustVC(t, "hypernode", "tree").Stdout
	t.Logf("$ kubectl vc hypernode tree\n%s", text)
	contains(t, "tree", text,
		s1+"  tier 2", "! TwoParents: HyperNode "+r1+" is a member of 2 HyperNodes ("+s1+", "+s2+")",
		r1+"  tier 1  [second parent: listed under its first parent "+s1+"]",
		"! NoMatch: HyperNode "+s2+" has a member (labels rack=none-"+w.name+") that matches no node",
		"! NoMatch: HyperNode "+low+" lists HyperNode "+r1+"-ghost as a member, and there is none of that name",
		"! TierOrder: HyperNode "+low+" tier 1 is not above the tier 1 of its member "+w.n("r2"),
		"Not under the top (a cycle of members): "+c1+", "+c2,
		"Cycle: HyperNode "+c1+" is in a cycle of members ("+c1+" -> "+c2+" -> "+c1+")")

	group(t, ns, "soft", q, "1", &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.SoftNetworkTopologyMode}, schedulingv1beta1.PodGroupInqueue)
	rep, code := why(t, env.cli.Admin, "podgroup", "soft", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	has(t, rep, analysis.TopologyTreeBroken, true, "skips every job with a network-topology constraint, hard or soft", "is a member of 2 HyperNodes", "cycle of members")
	if code != 1 {
		t.Errorf("exit %d", code)
	}

	doc := env.cli.VC(t, "doctor", "-o", "json", "--scheduler-config-file="+env.withoutPlugin)
	var report struct {
		Checks []struct{ Check, Status, Message string }
	}
	if err := json.Unmarshal([]byte(doc.Stdout), &report); err != nil {
		t.Fatalf("doctor: %v\n%s", err, doc)
	}
	var lines []string
	for _, c := range report.Checks {
		if c.Check == "topology" {
			lines = append(lines, c.Status+" "+c.Message)
		}
	}
	all := strings.Join(lines, "\n")
	t.Logf("doctor's topology lines:\n%s", all)
	contains(t, "doctor", all, "FAIL TwoParents: HyperNode "+r1, "FAIL Cycle: HyperNode "+c1, "WARN NoMatch: HyperNode "+s2, "WARN TierOrder: HyperNode "+low,
		"WARN HyperNodes exist, but the scheduler's configuration (file "+env.withoutPlugin+") has no network-topology-aware plugin")
	if doc.Code != 1 {
		t.Errorf("doctor exit %d, want 1 (FAIL)", doc.Code)
	}
}

// A group with no constraint, created after a group whose tier no
// HyperNode reaches: the held group stays Inqueue and keeps its
// minResources counted by the overcommit plugin, which then refuses to
// enqueue the later one although the nodes are idle. 'why' says so for
// the group left out, naming the held group and why it never runs.
func TestWhyHeldByInqueueTopologyGroup(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns(), w.queue()
	n1 := w.node("n1", "2", nil)
	w.hyperNode("rack", 1, "rack", exact(nodeM, n1))
	group(t, ns, "held", q, "2", &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: ptr.To(0)}, schedulingv1beta1.PodGroupInqueue)
	group(t, ns, "later", q, "1", nil, schedulingv1beta1.PodGroupPending)
	pod(t, ns, "later-0", "later", "1", "")
	rep, code := why(t, env.cli.Admin, "podgroup", "later", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	// The cluster's other tests' nodes are gone: this world's one node
	// of 2 CPUs, times overcommit's default factor 1.2.
	has(t, rep, analysis.HeldByInqueueGroups, true, "cpu 2 Inqueue + 1 needed > 2.4",
		"podgroup/"+ns+"/held Inqueue holds cpu=2, and its network topology (hard, highest tier 0) fits no HyperNode")
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	// The held group itself: its tier is below every HyperNode's.
	rep, _ = why(t, env.cli.Admin, "podgroup", "held", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	has(t, rep, analysis.TopologyNoFit, true, "no HyperNode has tier 0 or lower")
}

// A running group: where its pods were placed, the lowest HyperNode
// holding them all.
func TestWhyPlacement(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns(), w.queue()
	rackA, _, spine := topo(w)
	group(t, ns, "run", q, "2", &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: ptr.To(1)}, schedulingv1beta1.PodGroupRunning)
	pod(t, ns, "run-0", "run", "1", w.n("a1"))
	pod(t, ns, "run-1", "run", "1", w.n("a2"))
	rep, code := why(t, env.cli.Admin, "podgroup", "run", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	has(t, rep, analysis.TopologyPlacement, false, "inside HyperNode "+rackA+" (tier 1), the lowest holding them all")
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	// Spread over both racks: placed in the spine, above its tier 1.
	group(t, ns, "spread", q, "2", &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: ptr.To(1)}, schedulingv1beta1.PodGroupRunning)
	pod(t, ns, "spread-0", "spread", "500m", w.n("a1"))
	pod(t, ns, "spread-1", "spread", "500m", w.n("b1"))
	rep, _ = why(t, env.cli.Admin, "podgroup", "spread", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	has(t, rep, analysis.TopologyPlacement, false, "inside HyperNode "+spine+" (tier 2)", "above the highest tier 1 its constraint allows")
}

// A user who may not list nodes: 'hypernode list' and 'why' say so in
// words and show no nodes or resources they would have to guess.
func TestUserWhoMayNotListNodes(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns(), w.queue()
	rackA, _, _ := topo(w)
	grantAlice(t, ns)
	group(t, ns, "g", q, "1", &schedulingv1beta1.NetworkTopologySpec{Mode: schedulingv1beta1.HardNetworkTopologyMode, HighestTierAllowed: ptr.To(1)}, schedulingv1beta1.PodGroupInqueue)

	r := env.cli.Run(t, env.cli.Alice, "hypernode", "list", rackA)
	t.Logf("$ kubectl vc hypernode list %s (as alice)\n%s", rackA, r)
	if r.Code != 0 {
		t.Fatalf("exit %d", r.Code)
	}
	contains(t, "stderr", r.Stderr, "Warning: you may not list nodes", "regex and label members are not resolved, exact members are taken as written, and no resources are shown")
	contains(t, "row", r.Stdout, rackA, "<unknown>")
	if strings.Contains(r.Stdout, "cpu=") {
		t.Errorf("resources shown without nodes:\n%s", r.Stdout)
	}

	rep, _ := why(t, env.cli.Alice, "podgroup", "g", "-n", ns, "--scheduler-config-file="+env.withPlugin)
	has(t, rep, analysis.NotChecked, false, "could not read nodes")
	var topoNote bool
	for _, x := range rep.Reasons {
		if x.Reason == analysis.NotChecked && strings.Contains(x.Message, "idle resources under the HyperNodes are not known") {
			topoNote = true
		}
	}
	// Nodes not read are not "no node Ready": nothing is guessed.
	if !topoNote || reason(rep, analysis.TopologyNoFit) != nil || reason(rep, analysis.NoReadyNodes) != nil {
		t.Errorf("want the idle resources said unknown, no TopologyNoFit: %+v", rep.Reasons)
	}
}
