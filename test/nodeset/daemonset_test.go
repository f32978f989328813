package nodeset

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestDaemonSetMode: a DaemonSet-mode NodeSet runs one pod per Kubernetes
// node its template admits, named, labelled and pinned as Slinky's
// operator makes them, its Slurm node the node's hostname. A cordoned
// node's Slurm node is drained before its pod goes, a busy one only once
// its job ends; uncordoned, the node gets a pod again. A deleted node's pod
// goes after its drain; a node labelled to match gets one; a template
// change replaces each pod on its node.
func TestDaemonSetMode(t *testing.T) {
	e := start(t, "dsm", 4)
	sel := map[string]string{"kubectl-vc.test/pool": e.NS}
	// Slurm nodes dsm-0 to dsm-3: dsm-0 and dsm-2 by the part of the node's
	// name before its first dot, dsm-1 by the node's hostname-override.
	n0 := e.newDaemonNode("dsm-0."+e.NS, sel, nil)
	n1 := e.newDaemonNode("kube-dsm-1-"+e.NS, sel, map[string]string{slinkyv1beta1.AnnotationNodeHostnameOverride: "dsm-1"})
	tainted := e.newDaemonNode("dsm-2."+e.NS, sel, nil, corev1.Taint{Key: "maint", Value: "yes", Effect: corev1.TaintEffectNoSchedule})
	other := e.newDaemonNode("dsm-3."+e.NS, nil, nil)

	e.NewNodeSet("dsm", 1, func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.ScalingMode = slinkyv1beta1.ScalingModeDaemonSet
		ns.Spec.Template.PodSpec.NodeSelector = sel
	})
	e.Eventually("one pod per matching node, status.desired 2, spec supported", func() (bool, string) {
		c := e.condition("dsm", "SpecSupported")
		st := e.Get("dsm").Status
		return names(e.Pods()) != "" && len(e.daemonPods()) == 2 && st.Desired == 2 && c != nil && c.Status == metav1.ConditionTrue,
			fmt.Sprintf("pods %v, desired %d, %v", e.daemonPods(), st.Desired, c)
	})
	for node, host := range map[string]string{n0: "dsm-0", n1: "dsm-1"} {
		p := e.daemonPods()[node]
		if p == nil {
			t.Fatalf("no pod for node %s: %v", node, e.daemonPods())
		}
		if !strings.HasPrefix(p.Name, "dsm-") || len(p.Name) != len("dsm-")+5 || p.GenerateName != "dsm-" ||
			p.Spec.Hostname != host || p.Spec.NodeName != "" ||
			p.Labels[slinkyv1beta1.LabelScalingMode] != "DaemonSet" || p.Labels[slinkyv1beta1.LabelPodHostname] != host ||
			p.Labels[slinkyv1beta1.LabelPodName] != p.Name {
			t.Fatalf("pod of %s: name %q generateName %q hostname %q nodeName %q labels %v",
				node, p.Name, p.GenerateName, p.Spec.Hostname, p.Spec.NodeName, p.Labels)
		}
	}
	if _, ok := e.daemonPods()[tainted]; ok {
		t.Fatalf("pod on a node whose taint the template does not tolerate")
	}
	// The commands: list counts the matching nodes as desired (spec.replicas,
	// 1, means nothing in this mode); scale is refused in one line, unwritten.
	listed := false
	for _, line := range strings.Split(e.mustVC("nodeset", "list", "dsm"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "dsm" {
			listed = true
			if f[1] != "2" {
				t.Errorf("nodeset list: DESIRED %s, want the 2 matching nodes: %q", f[1], line)
			}
		}
	}
	if !listed {
		t.Error("nodeset list shows no row for dsm")
	}
	code, _, errOut := e.vcCmd(controlplane.AdminUser, "nodeset", "scale", "dsm", "--replicas", "5")
	if code != 1 || !strings.Contains(errOut, "scalingMode DaemonSet") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("nodeset scale of a DaemonSet-mode NodeSet: exit %d, stderr %q; want one line saying why", code, errOut)
	}
	if r := e.Get("dsm").Spec.Replicas; r == nil || *r != 1 {
		t.Errorf("the refused scale wrote replicas %v", r)
	}
	if _, ok := e.daemonPods()[other]; ok {
		t.Fatalf("pod on a node the nodeSelector does not select")
	}
	e.bindDaemonPods()
	e.MarkAllReady()

	// Busy dsm-0, cordoned: drained, its pod kept while the job runs.
	job, err := e.Slurm.Allocate(e.Ctx, "dsm-0", 30)
	if err != nil {
		t.Fatal(err)
	}
	first := e.daemonPods()[n0].Name
	e.setUnschedulable(n0, true)
	e.Eventually("busy node's pod cordoned with a deadline, its Slurm node draining", func() (bool, string) {
		p := e.Pods()[first]
		st := e.SlurmState("dsm-0")
		return p != nil && p.Annotations[slinkyv1beta1.AnnotationPodCordon] == "true" &&
			p.Annotations[slinkyv1beta1.AnnotationPodDeadline] != "" && strings.HasPrefix(st, "DRAINING"), st
	})
	e.Eventually("status: the cordoned node leaves desired, its drain counted", func() (bool, string) {
		st := e.Get("dsm").Status
		return st.Desired == 1 && st.SlurmDrain == 1, fmt.Sprintf("%+v", st)
	})
	// Counted by a later sync than the one that drained: the pod outlived it.
	if e.Pods()[first] == nil {
		t.Fatal("pod deleted while its Slurm node ran a job")
	}
	if st := e.SlurmState("dsm-0"); st != "DRAINING (kubectl-vc: kubernetes node "+n0+" cordoned)" {
		t.Fatalf("dsm-0 in Slurm: %s", st)
	}
	if err := e.Slurm.EndJob(e.Ctx, job, "dsm-0"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("drained pod deleted, none made on the cordoned node", func() (bool, string) {
		_, ok := e.daemonPods()[n0]
		return e.Pods()[first] == nil && !ok, fmt.Sprint(e.daemonPods())
	})

	// Uncordoned: a new pod, and the Slurm node it drained resumed.
	e.setUnschedulable(n0, false)
	e.Eventually("uncordoned node gets its pod back", func() (bool, string) {
		p := e.daemonPods()[n0]
		return p != nil && p.Name != first && p.Spec.Hostname == "dsm-0", fmt.Sprint(e.daemonPods())
	})
	e.Eventually("its Slurm node resumed", func() (bool, string) {
		st := e.SlurmState("dsm-0")
		return !strings.Contains(st, "DRAIN"), st
	})

	// A node deleted: its pod goes once its (idle) Slurm node is drained.
	gone := e.daemonPods()[n1].Name
	if err := e.Kube.CoreV1().Nodes().Delete(e.Ctx, n1, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("deleted node's pod removed after its drain", func() (bool, string) {
		st := e.SlurmState("dsm-1")
		return e.Pods()[gone] == nil && strings.HasPrefix(st, "DRAIN"), st
	})

	// A node labelled to match gets a pod.
	patch := fmt.Sprintf(`{"metadata":{"labels":{"kubectl-vc.test/pool":%q}}}`, e.NS)
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, other, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("newly matching node gets a pod; desired counts it", func() (bool, string) {
		p := e.daemonPods()[other]
		st := e.Get("dsm").Status
		return p != nil && p.Spec.Hostname == "dsm-3" && st.Desired == 2, fmt.Sprintf("%v desired %d", e.daemonPods(), st.Desired)
	})

	// A template change replaces each node's pod on that node, through the
	// same drain as StatefulSet mode's update, and resumes its Slurm node.
	old := map[string]string{}
	for node, p := range e.daemonPods() {
		old[node] = p.Name
	}
	e.PatchNodeSet("dsm", `{"spec":{"template":{"metadata":{"labels":{"team":"other"}}}}}`)
	e.Eventually("each node's pod replaced by one of the new template", func() (bool, string) {
		pods := e.daemonPods()
		for _, node := range []string{n0, other} {
			p := pods[node]
			if p == nil || p.Name == old[node] || p.Labels["team"] != "other" {
				return false, fmt.Sprint(pods)
			}
		}
		return len(pods) == 2, fmt.Sprint(pods)
	})
	e.Eventually("their Slurm nodes resumed", func() (bool, string) {
		a, b := e.SlurmState("dsm-0"), e.SlurmState("dsm-3")
		return !strings.Contains(a, "DRAIN") && !strings.Contains(b, "DRAIN"), a + ", " + b
	})
}

// TestScalingModeSwitch: a NodeSet switched between the modes retires the
// pods of the old one through the same drain, as Slinky's operator
// deletes them, and makes those of the new one.
func TestScalingModeSwitch(t *testing.T) {
	e := start(t, "dsw", 2)
	sel := map[string]string{"kubectl-vc.test/pool": e.NS}
	node := e.newDaemonNode("dsw-1."+e.NS, sel, nil)
	e.NewNodeSet("dsw", 1, func(ns *slinkyv1beta1.NodeSet) { ns.Spec.Template.PodSpec.NodeSelector = sel })
	e.Eventually("StatefulSet-mode pod", func() (bool, string) { return names(e.Pods()) == "dsw-0", names(e.Pods()) })

	e.PatchNodeSet("dsw", `{"spec":{"scalingMode":"DaemonSet"}}`)
	e.Eventually("DaemonSet mode: the ordinal pod retired after its drain, the node's pod made", func() (bool, string) {
		p := e.daemonPods()[node]
		st := e.SlurmState("dsw-0")
		return len(e.Pods()) == 1 && p != nil && p.Spec.Hostname == "dsw-1" && strings.HasPrefix(st, "DRAIN"), names(e.Pods()) + " " + st
	})

	e.PatchNodeSet("dsw", `{"spec":{"scalingMode":"StatefulSet"}}`)
	e.Eventually("StatefulSet mode again: the node's pod retired after its drain, the ordinal pod back", func() (bool, string) {
		st := e.SlurmState("dsw-1")
		return names(e.Pods()) == "dsw-0" && strings.HasPrefix(st, "DRAIN"), names(e.Pods()) + " " + st
	})
}
