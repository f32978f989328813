package nodeset

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// dsNodeSet is a DaemonSet-mode NodeSet whose template selects nodes
// labelled pool=hpc and tolerates the taint gpu=yes:NoSchedule.
func dsNodeSet() *slinkyv1beta1.NodeSet {
	return &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "hpc", UID: "ds-uid"},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			ScalingMode:   slinkyv1beta1.ScalingModeDaemonSet,
			Slurmd:        corev1.Container{Name: "slurmd", Image: "slurmd:1"},
			Template: slinkyv1beta1.PodTemplate{PodSpec: corev1.PodSpec{
				NodeSelector: map[string]string{"pool": "hpc"},
				Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoSchedule}},
				Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1,
						Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "fast", Operator: corev1.NodeSelectorOpExists}}}}},
				}},
			}},
		},
	}
}

type nodeOpt func(*corev1.Node)

func dsNode(name string, opts ...nodeOpt) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"pool": "hpc"}}}
	for _, o := range opts {
		o(n)
	}
	return n
}

func unlabelled(n *corev1.Node)   { n.Labels = nil }
func cordonedNode(n *corev1.Node) { n.Spec.Unschedulable = true }
func taint(key string, effect corev1.TaintEffect) nodeOpt {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: "yes", Effect: effect})
	}
}
func override(host string) nodeOpt {
	return func(n *corev1.Node) {
		n.Annotations = map[string]string{slinkyv1beta1.AnnotationNodeHostnameOverride: host}
	}
}

// TestNodeWantsPod: Kubernetes' DaemonSet predicate over the template's
// node selector, required node affinity and tolerations; a cordoned node
// wants no pod and keeps none.
func TestNodeWantsPod(t *testing.T) {
	template := templatePod(dsNodeSet(), nil)
	required := dsNodeSet()
	required.Spec.Template.PodSpec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}
	for _, tc := range []struct {
		what      string
		template  *corev1.Pod
		node      *corev1.Node
		run, keep bool
	}{
		{"selected", template, dsNode("n"), true, true},
		{"not selected", template, dsNode("n", unlabelled), false, false},
		{"tolerated NoSchedule", template, dsNode("n", taint("gpu", corev1.TaintEffectNoSchedule)), true, true},
		{"untolerated NoSchedule: no new pod, the old stays", template, dsNode("n", taint("maint", corev1.TaintEffectNoSchedule)), false, true},
		{"untolerated NoExecute: the pod goes", template, dsNode("n", taint("gpu", corev1.TaintEffectNoExecute)), false, false},
		{"PreferNoSchedule ignored", template, dsNode("n", taint("x", corev1.TaintEffectPreferNoSchedule)), true, true},
		{"cordoned", template, dsNode("n", cordonedNode), false, false},
		{"required affinity unmet", templatePod(required, nil), dsNode("n"), false, false},
		{"required affinity met", templatePod(required, nil), dsNode("n", func(n *corev1.Node) { n.Labels["zone"] = "a" }), true, true},
	} {
		run, keep := nodeWantsPod(klog.Background(), tc.template, tc.node)
		if run != tc.run || keep != tc.keep {
			t.Errorf("%s: run %v keep %v, want %v %v", tc.what, run, keep, tc.run, tc.keep)
		}
	}
}

func TestDaemonHostname(t *testing.T) {
	for node, want := range map[*corev1.Node]string{
		dsNode("gpu-7"):                          "gpu-7",
		dsNode("gpu-7.rack2.example.com"):        "gpu-7",
		dsNode("gpu-7.example", override("s-7")): "s-7",
		dsNode("gpu-7", override("")):            "gpu-7",
	} {
		if got := daemonHostname(node); got != want {
			t.Errorf("%s %v: %q, want %q", node.Name, node.Annotations, got, want)
		}
	}
}

// TestNewDaemonPod: the pod of a node is named, labelled and pinned as
// Slinky's operator makes it.
func TestNewDaemonPod(t *testing.T) {
	ns := dsNodeSet()
	ns.Spec.Template.PodSpec.NodeName = "somewhere"
	ns.Spec.Template.PodSpec.Hostname = "ignored-"
	pod := newDaemonPod(ns, nil, dsNode("gpu-7.rack2"), "abc")
	if !strings.HasPrefix(pod.Name, "ds-") || len(pod.Name) != len("ds-")+5 || pod.GenerateName != "ds-" {
		t.Errorf("name %q, generateName %q", pod.Name, pod.GenerateName)
	}
	wantLabels := map[string]string{
		slinkyv1beta1.LabelScalingMode:  "DaemonSet",
		slinkyv1beta1.LabelPodName:      pod.Name,
		slinkyv1beta1.LabelPodHostname:  "gpu-7",
		slinkyv1beta1.LabelRevisionHash: "abc",
		slinkyv1beta1.LabelAppInstance:  "ds",
	}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s=%q, want %q", k, pod.Labels[k], v)
		}
	}
	if _, ok := pod.Labels[slinkyv1beta1.LabelPodIndex]; ok {
		t.Errorf("pod-index label on a DaemonSet-mode pod: %v", pod.Labels)
	}
	if pod.Spec.Hostname != "gpu-7" || slinkyv1beta1.SlurmNodeName(pod) != "gpu-7" {
		t.Errorf("hostname %q, Slurm node %q", pod.Spec.Hostname, slinkyv1beta1.SlurmNodeName(pod))
	}
	if pod.Spec.NodeName != "" {
		t.Errorf("nodeName %q: the scheduler must place the pod", pod.Spec.NodeName)
	}
	if got := daemonTarget(pod); got != "gpu-7.rack2" {
		t.Errorf("target %q", got)
	}
	na := pod.Spec.Affinity.NodeAffinity
	if len(na.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("preferred terms lost: %+v", na)
	}
	if pod.Spec.Affinity.PodAntiAffinity == nil {
		t.Error("no slurmd anti-affinity")
	}
	if len(pod.Spec.Containers) == 0 || pod.Spec.Containers[0].Name != "slurmd" {
		t.Errorf("containers %+v", pod.Spec.Containers)
	}
	// Scheduled on another node (a bind that ignored the affinity): the
	// node it runs on is the one it is for.
	pod.Spec.NodeName = "elsewhere"
	if got := daemonTarget(pod); got != "elsewhere" {
		t.Errorf("target of a scheduled pod %q", got)
	}
	// Host network: the Slurm node is still the hostname, as the operator reads it.
	pod.Spec.HostNetwork = true
	if got := slinkyv1beta1.SlurmNodeName(pod); got != "gpu-7" {
		t.Errorf("host network Slurm node %q", got)
	}
}

// TestKeepDaemonTarget: the pod cache keeps the node an unscheduled pod is
// for, and nothing else of its affinity.
func TestKeepDaemonTarget(t *testing.T) {
	src := newDaemonPod(dsNodeSet(), nil, dsNode("n1"), "h")
	dst := &corev1.Pod{}
	keepDaemonTarget(dst, src)
	if daemonTarget(dst) != "n1" || dst.Spec.Affinity.PodAntiAffinity != nil || len(dst.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Errorf("kept %+v", dst.Spec.Affinity)
	}
	plain := &corev1.Pod{}
	keepDaemonTarget(plain, &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}}})
	if plain.Spec.Affinity != nil {
		t.Errorf("kept an affinity naming no node: %+v", plain.Spec.Affinity)
	}
}

func TestKeepHostnameOverride(t *testing.T) {
	shared := map[string]string{"other": "x"}
	dst := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: shared}}
	keepHostnameOverride(dst, dsNode("n", override("s-1")))
	if dst.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride] != "s-1" || len(shared) != 1 {
		t.Errorf("kept %v; shared map now %v", dst.Annotations, shared)
	}
}

// dsPod is a DaemonSet-mode pod of ds for the node, made at minute age.
func dsPod(name string, node *corev1.Node, minute int) *corev1.Pod {
	p := newDaemonPod(dsNodeSet(), nil, node, "h")
	p.Name = name
	p.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC))
	return p
}

func nodeNames(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func retired(plan daemonPlan) map[string]string {
	out := map[string]string{}
	for _, r := range plan.retire {
		out[r.pod.Name] = ""
		if r.cordoned != nil {
			out[r.pod.Name] = r.cordoned.Name
		}
	}
	return out
}

// TestPlanDaemonPods: which nodes get a pod and which pods go, per node.
func TestPlanDaemonPods(t *testing.T) {
	ns := dsNodeSet()
	fresh := dsNode("fresh")                                                   // wants a pod, has none
	served := dsNode("served")                                                 // has its pod
	unlabelledNode := dsNode("plain", unlabelled)                              // never selected
	noSched := dsNode("nosched", taint("maint", corev1.TaintEffectNoSchedule)) // keeps its pod, would get none
	noSchedEmpty := dsNode("nosched-empty", taint("maint", corev1.TaintEffectNoSchedule))
	noExec := dsNode("noexec", taint("maint", corev1.TaintEffectNoExecute))
	cordoned := dsNode("cordoned", cordonedNode)
	twice := dsNode("twice")                           // two pods: the oldest stays
	renamed := dsNode("renamed", override("new-name")) // its pod's hostname is the old one
	waiting := dsNode("waiting")                       // its old pod still terminates
	nodes := []*corev1.Node{fresh, served, unlabelledNode, noSched, noSchedEmpty, noExec, cordoned, twice, renamed, waiting}

	oldName := dsPod("p-renamed", dsNode("renamed"), 1)
	stsPod := newPod(ns, nil, 0, "h") // made in StatefulSet mode before the switch
	loose := dsPod("p-loose", served, 1)
	loose.Spec.Affinity = nil // tied to no node
	active := []*corev1.Pod{
		dsPod("p-served", served, 1),
		dsPod("p-nosched", noSched, 1),
		dsPod("p-noexec", noExec, 1),
		dsPod("p-cordoned", cordoned, 1),
		dsPod("p-twice-new", twice, 5),
		dsPod("p-twice-old", twice, 2),
		oldName,
		dsPod("p-gone", dsNode("gone"), 1),
		stsPod,
		loose,
	}
	terminating := []*corev1.Pod{dsPod("p-waiting", waiting, 0)}

	plan := planDaemonPods(klog.Background(), ns, nil, nodes, active, terminating)
	if want := []string{"fresh"}; !reflect.DeepEqual(nodeNames(plan.create), want) {
		t.Errorf("create %v, want %v", nodeNames(plan.create), want)
	}
	want := map[string]string{
		"p-noexec":    "",
		"p-cordoned":  "cordoned", // drained for the node's cordon
		"p-twice-new": "",
		"p-renamed":   "",
		"p-gone":      "",
		stsPod.Name:   "",
		"p-loose":     "",
	}
	if got := retired(plan); !reflect.DeepEqual(got, want) {
		t.Errorf("retire %v\nwant %v", got, want)
	}
	// fresh, served, twice, renamed, waiting; not the tainted, cordoned or
	// unlabelled ones.
	if plan.desired != 5 {
		t.Errorf("desired %d, want 5", plan.desired)
	}
	if !plan.wait {
		t.Error("the nodes whose old pod is going are not waited for")
	}
	if !sort.SliceIsSorted(plan.retire, func(i, j int) bool { return plan.retire[i].pod.Name < plan.retire[j].pod.Name }) {
		t.Error("retirements not in a stable order")
	}

	// Once the old pods are gone, their nodes get new ones (the renamed
	// node's under its new hostname).
	rest := []*corev1.Pod{active[0], active[1], active[5]}
	plan = planDaemonPods(klog.Background(), ns, nil, nodes, rest, nil)
	if want := []string{"fresh", "renamed", "waiting"}; !reflect.DeepEqual(nodeNames(plan.create), want) {
		t.Errorf("create %v, want %v", nodeNames(plan.create), want)
	}
	if len(plan.retire) != 0 || plan.wait {
		t.Errorf("retire %v, wait %v", retired(plan), plan.wait)
	}
	if pod := newDaemonPod(ns, nil, renamed, "h"); pod.Spec.Hostname != "new-name" {
		t.Errorf("renamed node's pod hostname %q", pod.Spec.Hostname)
	}
}

// TestPlanDaemonPodsHostnameConflict: one hostname, one pod. Nodes a.x and
// a.y are both "a": the node whose pod runs keeps it and the other gets
// none; of two without a pod, the first by name gets it. A hostname whose
// pod is still leaving (retiring from a node gone, or terminating) is
// waited for, not given to a second pod.
func TestPlanDaemonPodsHostnameConflict(t *testing.T) {
	ns := dsNodeSet()
	ax, ay := dsNode("a.y"), dsNode("a.x") // a.x sorts first but a.y has the pod
	bx, by := dsNode("b.x"), dsNode("b.y")
	cNew, dNew := dsNode("c.new"), dsNode("d.new")
	active := []*corev1.Pod{dsPod("p-a", ax, 1), dsPod("p-c", dsNode("c.old"), 1)}
	terminating := []*corev1.Pod{dsPod("p-d", dsNode("d.old"), 1)}

	plan := planDaemonPods(klog.Background(), ns, nil, []*corev1.Node{ax, ay, bx, by, cNew, dNew}, active, terminating)
	if want := []string{"b.x"}; !reflect.DeepEqual(nodeNames(plan.create), want) {
		t.Errorf("create %v, want %v", nodeNames(plan.create), want)
	}
	want := []hostnameConflict{{node: "a.x", owner: "a.y", hostname: "a"}, {node: "b.y", owner: "b.x", hostname: "b"}}
	if !reflect.DeepEqual(plan.conflicts, want) {
		t.Errorf("conflicts %+v\nwant %+v", plan.conflicts, want)
	}
	if !plan.wait {
		t.Error("c.new and d.new do not wait for the pods of hostnames c and d to go")
	}
	if got := retired(plan); !reflect.DeepEqual(got, map[string]string{"p-c": ""}) {
		t.Errorf("retire %v", got)
	}
	// Every node that wants a pod counts as desired, conflicting or not.
	if plan.desired != 6 {
		t.Errorf("desired %d, want 6", plan.desired)
	}

	// Once they are gone, c.new and d.new get theirs.
	plan = planDaemonPods(klog.Background(), ns, nil, []*corev1.Node{ax, ay, bx, by, cNew, dNew}, active[:1], nil)
	if want := []string{"b.x", "c.new", "d.new"}; !reflect.DeepEqual(nodeNames(plan.create), want) || plan.wait {
		t.Errorf("create %v (want %v), wait %v", nodeNames(plan.create), want, plan.wait)
	}
}

// TestNamedAsPodOf: a NodeSet claims pods of either mode by name.
func TestNamedAsPodOf(t *testing.T) {
	ns := dsNodeSet()
	for _, tc := range []struct {
		pod  *corev1.Pod
		want bool
	}{
		{newPod(ns, nil, 3, "h"), true},
		{newDaemonPod(ns, nil, dsNode("n"), "h"), true},
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ds-x7k2p", GenerateName: "ds-"}}, false}, // not labelled DaemonSet-mode
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ds-x7k2p", GenerateName: "dsx-", Labels: map[string]string{slinkyv1beta1.LabelScalingMode: "DaemonSet"}}}, false},
		{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ds-x7k2p"}}, false},
	} {
		if got := namedAsPodOf(ns, tc.pod); got != tc.want {
			t.Errorf("%s (generateName %q): %v, want %v", tc.pod.Name, tc.pod.GenerateName, got, tc.want)
		}
	}
	long := dsNodeSet()
	long.Name = strings.Repeat("a", 62)
	if n := daemonPodName(long); len(n) != 63 {
		t.Errorf("generated name %q: %d characters", n, len(n))
	}
}
