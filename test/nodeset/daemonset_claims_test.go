package nodeset

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// claimOf is the name of the claim the pod's volume vol names, "" if none.
func claimOf(p *corev1.Pod, vol string) string {
	for _, v := range p.Spec.Volumes {
		if v.Name == vol && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// claimUID is the claim's UID, "" when it is gone.
func (e *env) claimUID(name string) types.UID {
	e.T.Helper()
	c, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return c.UID
}

// TestDaemonSetClaims: volumeClaimTemplates in scalingMode DaemonSet, as
// Slinky's operator names their claims, after the node: <template>-
// <nodeset>-<hostname>. A pod made again on its node finds its claim; a
// node that leaves the NodeSet has its pod drained and, with whenScaled
// Delete, its claim handed to that pod for the garbage collector. Two
// nodes with one hostname (dsc-1.… and dsc-1.zzz-…) get one pod between
// them, a Warning event saying so; the second gets the hostname only once
// the first's pod is gone, and its pod waits for the claim that pod left
// to be deleted rather than take it over.
func TestDaemonSetClaims(t *testing.T) {
	e := startWithoutController(t, "dsc", 2)
	e.runControllerWith(controllerOptions{events: true})
	sel := map[string]string{"kubectl-vc.test/pool": e.NS}
	n0 := e.newDaemonNode("dsc-0."+e.NS, sel, nil)
	n1 := e.newDaemonNode("dsc-1."+e.NS, sel, nil)
	twin := e.newDaemonNode("dsc-1.zzz-"+e.NS, sel, nil)
	e.NewNodeSet("dsc", 1, func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.ScalingMode = slinkyv1beta1.ScalingModeDaemonSet
		ns.Spec.Template.PodSpec.NodeSelector = sel
		ns.Spec.PersistentVolumeClaimRetentionPolicy = &slinkyv1beta1.NodeSetPersistentVolumeClaimRetentionPolicy{
			WhenScaled: slinkyv1beta1.DeletePersistentVolumeClaimRetentionPolicyType}
		ns.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "scratch"}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}}
	})
	e.Eventually("a pod on dsc-0 and one on dsc-1 (not its twin), spec supported", func() (bool, string) {
		c := e.condition("dsc", "SpecSupported")
		pods := e.daemonPods()
		return pods[n0] != nil && pods[n1] != nil && len(pods) == 2 && c != nil && c.Status == metav1.ConditionTrue,
			fmt.Sprintf("%v %v", pods, c)
	})
	e.Eventually("the twin's conflict said in a Warning event", func() (bool, string) {
		ev := e.events("dsc", "HostnameConflict")
		return len(ev) > 0 && strings.Contains(ev[0], "node "+twin+" gets no pod") && strings.Contains(ev[0], `"dsc-1"`) &&
			strings.Contains(ev[0], n1), fmt.Sprint(ev)
	})
	uids := map[string]types.UID{}
	for node, host := range map[string]string{n0: "dsc-0", n1: "dsc-1"} {
		name := "data-dsc-" + host
		p := e.daemonPods()[node]
		if got := claimOf(p, "data"); got != name {
			t.Fatalf("pod %s on %s mounts claim %q, want %q", p.Name, node, got, name)
		}
		c, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("claim of %s: %v", node, err)
		}
		if c.Labels["tier"] != "scratch" || c.Labels[slinkyv1beta1.LabelAppInstance] != "dsc" || len(c.OwnerReferences) != 0 {
			t.Fatalf("claim %s: labels %v, owners %v (whenDeleted Retain: none)", name, c.Labels, c.OwnerReferences)
		}
		uids[name] = c.UID
	}

	// A pod deleted by hand: the one made again on its node mounts the same
	// claim, its data kept.
	first := e.daemonPods()[n0].Name
	if err := e.Kube.CoreV1().Pods(e.NS).Delete(e.Ctx, first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("dsc-0's pod made again, on the same claim", func() (bool, string) {
		p := e.daemonPods()[n0]
		return p != nil && p.Name != first && claimOf(p, "data") == "data-dsc-dsc-0" && e.claimUID("data-dsc-dsc-0") == uids["data-dsc-dsc-0"],
			fmt.Sprint(e.daemonPods())
	})

	// dsc-1's node leaves the NodeSet: its pod is drained and deleted, its
	// claim owned by that pod (whenScaled Delete); dsc-0's keeps none.
	gone := e.daemonPods()[n1]
	patch := `{"metadata":{"labels":{"kubectl-vc.test/pool":null}}}`
	if _, err := e.Kube.CoreV1().Nodes().Patch(e.Ctx, n1, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("dsc-1's pod gone after its drain, its claim owned by it", func() (bool, string) {
		o := e.claimOwners("data-dsc-dsc-1")
		return e.Pods()[gone.Name] == nil && o == "[Pod/"+gone.Name+"]" && strings.HasPrefix(e.SlurmState("dsc-1"), "DRAIN"), o
	})
	if o := e.claimOwners("data-dsc-dsc-0"); o != "[]" {
		t.Fatalf("claim of a pod that stays: owners %s", o)
	}

	// The hostname is free: the twin's pod is due, but the claim of that
	// name is the retired pod's, to be deleted. No garbage collector runs
	// here: the pod waits, and the test deletes the claim as it would.
	e.Eventually("the twin's pod waits for the old claim to go", func() (bool, string) {
		ev := strings.Join(e.events("dsc", "FailedCreate"), "|")
		return strings.Contains(ev, "claim data-dsc-dsc-1 belongs to pod "+gone.Name), ev
	})
	if p := e.daemonPods()[twin]; p != nil {
		t.Fatalf("the twin got pod %s on the claim the retired pod left", p.Name)
	}
	if err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Delete(e.Ctx, "data-dsc-dsc-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// kubernetes.io/pvc-protection holds the claim until its controller,
	// not running here, lets it go; the test plays it.
	e.Eventually("the claim being deleted is waited for too", func() (bool, string) {
		ev := strings.Join(e.events("dsc", "FailedCreate"), "|")
		return strings.Contains(ev, "claim data-dsc-dsc-1 is being deleted"), ev
	})
	fin := `{"metadata":{"finalizers":null}}`
	if _, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Patch(e.Ctx, "data-dsc-dsc-1", types.MergePatchType, []byte(fin), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the twin's pod, as Slurm node dsc-1, on a new claim", func() (bool, string) {
		p := e.daemonPods()[twin]
		uid := e.claimUID("data-dsc-dsc-1")
		return p != nil && p.Spec.Hostname == "dsc-1" && claimOf(p, "data") == "data-dsc-dsc-1" && uid != "" && uid != uids["data-dsc-dsc-1"],
			fmt.Sprint(e.daemonPods())
	})
}
