package nodeset

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// Claims and persistentVolumeClaimRetentionPolicy, as Slinky's operator
// (and a StatefulSet) keeps them: the garbage collector deletes a claim
// once every owner it names is gone. whenDeleted Delete: each claim names
// its NodeSet as an owner (not a controller), so it goes with the NodeSet.
// whenScaled Delete: the claims of a pod a scale-in retires name that pod
// as an owner, once it is drained and just before it is deleted, so they
// go with it. Retain (the default) names neither. A claim another object
// controls is left alone.

// createClaims creates the claims the pod's claim templates give it, before
// the pod, as Slinky's operator (and a StatefulSet) does: one per template,
// named as claimName says, labelled with the template's and the NodeSet's
// selector labels, owned by the NodeSet when whenDeleted is Delete. A
// claim that exists is the pod's (a pod that comes back, or in DaemonSet
// mode one made again on the same node, finds its data); its owners are
// put right for the policy, unless it is on its way out (claimNotStale).
func (c *Controller) createClaims(ctx context.Context, ns *slinkyv1beta1.NodeSet, pod *corev1.Pod) error {
	for _, t := range ns.Spec.VolumeClaimTemplates {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claimName(ns, t.Name, pod), Namespace: ns.Namespace,
				Labels: map[string]string{}, Annotations: t.Annotations},
			Spec: *t.Spec.DeepCopy(),
		}
		for k, v := range t.Labels {
			claim.Labels[k] = v
		}
		for k, v := range selectorLabels(ns) {
			claim.Labels[k] = v
		}
		if deleteWithNodeSet(ns) {
			claim.OwnerReferences = []metav1.OwnerReference{nodeSetOwner(ns)}
		}
		_, err := c.podControl.CreateClaim(ctx, ns.Namespace, claim)
		if apierrors.IsAlreadyExists(err) {
			if err = c.claimNotStale(ctx, ns, claim.Name); err == nil {
				err = c.setClaimOwners(ctx, ns, claim.Name, nil)
			}
		}
		if err != nil {
			return fmt.Errorf("claim %s of pod %s: %w", claim.Name, pod.Name, err)
		}
	}
	return nil
}

// claimNotStale refuses, for now, a claim that exists but is on its way
// out: being deleted, or owned by a pod a scale-in retired under whenScaled
// Delete (the garbage collector deletes it once that pod is gone). A new
// pod bound to it would lose its data the moment the collector catches up,
// so, as Slinky's operator (and a StatefulSet) does, the pod waits for the
// claim to go and gets a new one. A pod that does not exist yet cannot be
// the owner a claim names.
func (c *Controller) claimNotStale(ctx context.Context, ns *slinkyv1beta1.NodeSet, name string) error {
	claim, err := c.podControl.GetClaim(ctx, ns.Namespace, name)
	if err != nil {
		// Gone meanwhile: the next sync creates it.
		return err
	}
	if claim.DeletionTimestamp != nil {
		return fmt.Errorf("claim %s is being deleted: the pod waits for it to go", name)
	}
	for _, r := range claim.OwnerReferences {
		if r.Kind == "Pod" && r.APIVersion == "v1" && (r.Controller == nil || !*r.Controller) {
			return fmt.Errorf("claim %s belongs to pod %s, retired by a scale-in with whenScaled Delete: "+
				"the new pod waits until the garbage collector deletes it", name, r.Name)
		}
	}
	return nil
}

func deleteWithNodeSet(ns *slinkyv1beta1.NodeSet) bool {
	p := ns.Spec.PersistentVolumeClaimRetentionPolicy
	return p != nil && p.WhenDeleted == slinkyv1beta1.DeletePersistentVolumeClaimRetentionPolicyType
}

func deleteWhenScaled(ns *slinkyv1beta1.NodeSet) bool {
	p := ns.Spec.PersistentVolumeClaimRetentionPolicy
	return p != nil && p.WhenScaled == slinkyv1beta1.DeletePersistentVolumeClaimRetentionPolicyType
}

func nodeSetOwner(ns *slinkyv1beta1.NodeSet) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: slinkyv1beta1.SchemeGroupVersion.String(), Kind: slinkyv1beta1.NodeSetKind.Kind,
		Name: ns.Name, UID: ns.UID}
}

// setClaimOwners makes the claim's owners what the policy asks: the
// NodeSet among them if whenDeleted is Delete, not otherwise; pod (when
// given: a pod a scale-in is about to delete) added. Other owners stay. A
// claim gone, or controlled by another object, is left as it is. The
// patch carries the claim's resourceVersion: a claim changed meanwhile is
// read again at the next sync.
func (c *Controller) setClaimOwners(ctx context.Context, ns *slinkyv1beta1.NodeSet, name string, pod *corev1.Pod) error {
	claim, err := c.podControl.GetClaim(ctx, ns.Namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ref := metav1.GetControllerOf(claim); ref != nil {
		return nil
	}
	var refs []metav1.OwnerReference
	hasSet, hasPod := false, false
	for _, r := range claim.OwnerReferences {
		switch {
		case r.UID == ns.UID:
			hasSet = true
			if !deleteWithNodeSet(ns) {
				continue
			}
		case pod != nil && r.UID == pod.UID:
			hasPod = true
		}
		refs = append(refs, r)
	}
	if deleteWithNodeSet(ns) && !hasSet {
		refs = append(refs, nodeSetOwner(ns))
	}
	if pod != nil && !hasPod {
		refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID})
	}
	if len(refs) == len(claim.OwnerReferences) && hasSet == deleteWithNodeSet(ns) && (pod == nil || hasPod) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": claim.ResourceVersion, "ownerReferences": refs}})
	if err != nil {
		return err
	}
	_, err = c.podControl.PatchClaim(ctx, ns.Namespace, name, types.MergePatchType, patch)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// claimOwnersSynced remembers, per NodeSet key, the generation whose
// retention policy its pods' claims were last put right for: a change of
// the spec reads each claim again, a sync without one reads none.
type claimOwnersSynced struct {
	mu  sync.Mutex
	gen map[string]int64
}

func (o *claimOwnersSynced) done(key string, gen int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	g, ok := o.gen[key]
	return ok && g == gen
}

func (o *claimOwnersSynced) set(key string, gen int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.gen == nil {
		o.gen = map[string]int64{}
	}
	o.gen[key] = gen
}

func (o *claimOwnersSynced) forget(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.gen, key)
}

// syncClaimOwners puts the owners of the claims of every pod right for the
// retention policy, once per generation of the NodeSet (and once after
// serve starts): a policy changed to Delete makes the NodeSet own its
// claims, one changed back to Retain lets them go.
func (s *nodeSetSync) syncClaimOwners(ctx context.Context) error {
	if len(s.set.Spec.VolumeClaimTemplates) == 0 || s.c.claimOwners.done(s.key, s.set.Generation) {
		return nil
	}
	retain := !deleteWithNodeSet(s.set) && !deleteWhenScaled(s.set)
	for _, p := range s.active {
		for _, t := range s.set.Spec.VolumeClaimTemplates {
			err := s.c.setClaimOwners(ctx, s.set, claimName(s.set, t.Name, p), nil)
			if retain && apierrors.IsForbidden(err) {
				// A serve whose role may not read claims: with Retain
				// there is nothing to do but take the NodeSet off claims
				// it could never have put itself on.
				s.c.claimOwners.set(s.key, s.set.Generation)
				return nil
			}
			if err != nil {
				return fmt.Errorf("claim %s of pod %s: %w", claimName(s.set, t.Name, p), p.Name, err)
			}
		}
	}
	s.c.claimOwners.set(s.key, s.set.Generation)
	return nil
}

// ownClaimsByPod makes a pod a scale-in retires the owner of its claims,
// when whenScaled is Delete: they go with it.
func (s *nodeSetSync) ownClaimsByPod(ctx context.Context, pod *corev1.Pod) error {
	if !deleteWhenScaled(s.set) {
		return nil
	}
	for _, t := range s.set.Spec.VolumeClaimTemplates {
		if err := s.c.setClaimOwners(ctx, s.set, claimName(s.set, t.Name, pod), pod); err != nil {
			return fmt.Errorf("claim %s of pod %s: %w", claimName(s.set, t.Name, pod), pod.Name, err)
		}
	}
	return nil
}
