package podgroup

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// syncOwner is the owner path: the group of an owner's pods is brought to
// what the owner and its current template say, when the owner is first
// seen (its pods may have been waiting for it) and whenever it changes.
func (c *Controller) syncOwner(ctx context.Context, o *ownerKind, ns, name string) error {
	v, err := c.cachedOwner(o, ns, name)
	if err != nil {
		return err
	}
	if v == nil {
		return nil // its group is garbage-collected with it
	}
	if o.scalable && replicasOf(v.replicas) == 0 {
		return c.deleteGroup(ctx, v.obj)
	}
	if v.selector == nil {
		return nil // not yet defaulted: nothing to select
	}
	sel, err := metav1.LabelSelectorAsSelector(v.selector)
	if err != nil {
		return nil // an invalid selector will not heal by retrying
	}
	if o.revisioned {
		// During a rolling update only the pods of the update revision
		// describe what the group should become; older replicas are on
		// their way out.
		rev, err := labels.NewRequirement(appsv1.ControllerRevisionHashLabelKey, "=", []string{v.revision})
		if err != nil {
			return nil // not a valid label value yet: nothing can match it
		}
		sel = sel.Add(*rev)
	}
	return c.syncOwned(ctx, v.obj, sel)
}

// replicasOf reads spec.replicas with the API default of 1.
func replicasOf(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// deleteGroup deletes the group of a workload scaled to zero. The cache
// says whether there is anything to delete, so a scaled-down ReplicaSet
// (Deployments keep many) costs no call.
func (c *Controller) deleteGroup(ctx context.Context, owner metav1.Object) error {
	pgName := GroupNamePrefix + string(owner.GetUID())
	ns := owner.GetNamespace()
	if !c.groups.Has(ns, pgName) {
		return nil
	}
	err := c.vc.SchedulingV1beta1().PodGroups(ns).Delete(ctx, pgName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete podgroup %s/%s: %w", ns, pgName, err)
	}
	return nil
}

// syncOwned creates or brings up to date the group of owner from the
// owner's live pods that sel selects, and annotates those pods.
func (c *Controller) syncOwned(ctx context.Context, owner metav1.Object, sel labels.Selector) error {
	pgName := GroupNamePrefix + string(owner.GetUID())
	pods, err := c.pods.Pods(owner.GetNamespace()).List(sel)
	if err != nil {
		return err
	}
	var members []*corev1.Pod
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		// Only live pods: an evicted (Failed) or finished pod holds no
		// resources, so as the template it would leave the group without
		// its cpu, memory and GPUs; it needs no group either.
		if ref == nil || ref.UID != owner.GetUID() || !c.wants(&p.Spec) || !live(p) {
			continue
		}
		// A pod that already belongs to another group (a LeaderWorkerSet
		// makes its own) is left alone.
		if g := p.Annotations[keys.KubeGroupName]; g != "" && g != pgName {
			continue
		}
		members = append(members, p)
	}
	if len(members) == 0 {
		return nil
	}
	// The pods of one revision share a template; pick one deterministically
	// so that repeated syncs agree on what the group should be.
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	if err := c.createOrUpdate(ctx, members[0]); err != nil {
		return err
	}
	var errs []error
	for _, p := range members {
		if err := c.annotate(ctx, p, pgName); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d pods not annotated: %w", len(errs), len(members), errs[0])
	}
	return nil
}

// createOrUpdate makes the group match what the pod (the owner's current
// template) and its owners say now. Unlike the pod path, which leaves an
// existing group alone, the owner path is where a group follows changes.
func (c *Controller) createOrUpdate(ctx context.Context, pod *corev1.Pod) error {
	upper, _ := c.ownerAnnotations(pod)
	pgName := GroupName(pod)
	if !c.groups.Has(pod.Namespace, pgName) {
		return c.create(ctx, pod, upper)
	}
	// The cache holds names only: the group is read whole, from the API
	// server, for the few owners whose group exists and is synced.
	existing, err := c.getGroup(ctx, pod.Namespace, pgName)
	if apierrors.IsNotFound(err) {
		return c.create(ctx, pod, upper)
	}
	if err != nil {
		return fmt.Errorf("get podgroup %s/%s: %w", pod.Namespace, pgName, err)
	}
	merged, changed := Merge(existing, c.build(pod, upper))
	if !changed {
		return nil
	}
	// A merge patch of the difference, never a full Update: the cached
	// group holds only the fields this controller and the queue controller
	// read (framework.CacheRead), and an Update would erase the rest, such
	// as the conditions the scheduler writes. The patch touches only the
	// fields Merge manages, so a concurrent write of others is kept.
	patch, err := mergePatch(existing, merged)
	if err != nil {
		return err
	}
	if err := c.patchGroup(ctx, pod.Namespace, pgName, patch); err != nil {
		return fmt.Errorf("patch podgroup %s/%s: %w", pod.Namespace, pgName, err)
	}
	c.metrics.updated.Inc()
	c.recorder.Eventf(pod, corev1.EventTypeNormal, "PodGroupUpdated", "updated podgroup %s to match the pod and its owners", pgName)
	return nil
}

// mergePatch is the JSON merge patch that turns from into to.
func mergePatch(from, to *v1beta1.PodGroup) ([]byte, error) {
	a, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(to)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(a, b)
}

// getGroup reads a podgroup from the API server, decoded as patchGroup
// decodes it (quantityguard) for the same reason.
func (c *Controller) getGroup(ctx context.Context, ns, name string) (*v1beta1.PodGroup, error) {
	if rc, ok := quantityguard.REST(c.vc); ok {
		return quantityguard.Get[v1beta1.PodGroup](ctx, rc, "podgroups", ns, name)
	}
	return c.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, name, metav1.GetOptions{})
}

// patchGroup merge-patches a podgroup. Through the REST client, the object
// returned is decoded as the guarded informer decodes it (quantityguard):
// its minResources may hold quantities, written by anyone who may patch
// it, that a typed client would parse for minutes. A fake clientset (the
// unit tests) is patched as it is.
func (c *Controller) patchGroup(ctx context.Context, ns, name string, patch []byte) error {
	opts := metav1.PatchOptions{FieldManager: fieldManager}
	if rc, ok := quantityguard.REST(c.vc); ok {
		_, err := quantityguard.Patch[v1beta1.PodGroup](ctx, rc, "podgroups", ns, name, types.MergePatchType, patch, opts)
		return err
	}
	_, err := c.vc.SchedulingV1beta1().PodGroups(ns).Patch(ctx, name, types.MergePatchType, patch, opts)
	return err
}
