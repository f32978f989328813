package nodeset

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// claimOwners are the kinds and names a claim names as its owners, "-"
// when it is gone.
func (e *env) claimOwners(name string) string {
	e.T.Helper()
	c, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		return "-"
	}
	var out []string
	for _, r := range c.OwnerReferences {
		out = append(out, r.Kind+"/"+r.Name)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}

// TestClaimRetentionDelete: persistentVolumeClaimRetentionPolicy as Slinky's
// operator and a StatefulSet keep it, through the owners the garbage
// collector follows. whenScaled Delete: the claim of a pod a scale-in
// retires names that pod as its owner before the pod is deleted (after its
// Slurm node is drained); the others keep theirs. whenDeleted Delete: every
// claim names the NodeSet, also those made before the policy said so;
// turned back to Retain, the claims no longer name it. A claim another
// object controls is left alone.
func TestClaimRetentionDelete(t *testing.T) {
	e := start(t, "ret", 3)
	e.NewNodeSet("ret", 3, func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}}
	})
	e.Eventually("3 pods", func() (bool, string) { return len(e.Pods()) == 3, names(e.Pods()) })
	e.MarkAllReady()
	for i := range 3 {
		if o := e.claimOwners(fmt.Sprintf("data-ret-%d", i)); o != "[]" {
			t.Fatalf("Retain: claim %d owned by %s", i, o)
		}
	}
	// A claim someone else controls: never touched.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keeper", Namespace: e.NS}}
	other, err := e.Kube.CoreV1().ConfigMaps(e.NS).Create(e.Ctx, other, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"keeper","uid":%q,"controller":true}]}}`, other.UID)
	if _, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Patch(e.Ctx, "data-ret-1", "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	e.PatchNodeSet("ret", `{"spec":{"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Delete"}}}`)
	e.Eventually("claims owned by the NodeSet", func() (bool, string) {
		o0, o1, o2 := e.claimOwners("data-ret-0"), e.claimOwners("data-ret-1"), e.claimOwners("data-ret-2")
		return o0 == "[NodeSet/ret]" && o1 == "[ConfigMap/keeper]" && o2 == "[NodeSet/ret]", o0 + " " + o1 + " " + o2
	})
	if c := e.condition("ret", "SpecSupported"); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("SpecSupported: %+v", c)
	}

	// A busy node, the one to go (the others cost more to delete): its
	// claim keeps its owners while the drain waits.
	for _, p := range []string{"ret-0", "ret-1"} {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"10"}}}`, slinkyv1beta1.AnnotationPodDeletionCost)
		if _, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, p, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	job, err := e.Slurm.Allocate(e.Ctx, "ret-2", 10)
	if err != nil {
		t.Fatal(err)
	}
	e.PatchNodeSet("ret", `{"spec":{"replicas":2}}`)
	e.Eventually("ret-2 draining", func() (bool, string) { st := e.SlurmState("ret-2"); return st == "DRAINING (kubectl-vc: scale-in)", st })
	if o := e.claimOwners("data-ret-2"); o != "[NodeSet/ret]" {
		t.Fatalf("claim of a pod still draining: owners %s", o)
	}
	pod2 := e.Pods()["ret-2"]
	if err := e.Slurm.EndJob(e.Ctx, job, "ret-2"); err != nil {
		t.Fatal(err)
	}
	e.Eventually("ret-2 gone, its claim owned by it", func() (bool, string) {
		o := e.claimOwners("data-ret-2")
		_, alive := e.Pods()["ret-2"]
		return !alive && o == "[NodeSet/ret Pod/ret-2]", o
	})
	c, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Get(e.Ctx, "data-ret-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(c.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == pod2.UID }) {
		t.Fatalf("claim owned by another pod than the one deleted: %+v", c.OwnerReferences)
	}

	e.PatchNodeSet("ret", `{"spec":{"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"}}}`)
	e.Eventually("Retain again: the NodeSet lets its claims go", func() (bool, string) {
		o0, o1 := e.claimOwners("data-ret-0"), e.claimOwners("data-ret-1")
		return o0 == "[]" && o1 == "[ConfigMap/keeper]", o0 + " " + o1
	})
}
