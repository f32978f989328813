package podgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// fieldManager names our writes in managedFields.
const fieldManager = "podgroup-controller"

func (c *Controller) sync(ctx context.Context, req request) error {
	var err error
	switch req.kind {
	case replicaSetKind:
		err = c.syncReplicaSet(ctx, req.namespace, req.name)
	case statefulSetKind:
		err = c.syncStatefulSet(ctx, req.namespace, req.name)
	case jobKind:
		err = c.syncJob(ctx, req.namespace, req.name)
	case daemonSetKind:
		err = c.syncDaemonSet(ctx, req.namespace, req.name)
	case queueKind:
		err = c.syncQueue(req.name)
	default:
		err = c.syncPod(ctx, req.namespace, req.name)
	}
	var refused *queueRefusedError
	if errors.As(err, &refused) {
		return c.waitForQueue(req, refused)
	}
	return err
}

// queueRefusedError is a group the API server refused because its queue
// is not Open (our admission policy, or Volcano's webhook, refuses new
// groups in a Closed or Closing queue).
type queueRefusedError struct {
	queue string
	err   error
}

func (e *queueRefusedError) Error() string { return e.err.Error() }
func (e *queueRefusedError) Unwrap() error { return e.err }

// Refusals that name a queue's state: our vc-workload-open-queue policy
// (pkg/manifests/policies) and Volcano's podgroup webhook.
var queueStateRefusals = []string{"accepts no new work", "can only submit PodGroup to queue with state"}

// refusedForQueue says whether the create of a group in queue was refused
// because of the queue's state: an admission refusal that says so, or any
// admission refusal while our cache shows the queue not Open.
func (c *Controller) refusedForQueue(err error, queue string) bool {
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !apierrors.IsBadRequest(err) {
		return false
	}
	msg := err.Error()
	for _, r := range queueStateRefusals {
		if strings.Contains(msg, r) {
			return true
		}
	}
	open, known := c.queueState(queue)
	return known && !open
}

// queueState is what our cache says of a queue: whether it accepts new
// groups, and whether it is there at all.
func (c *Controller) queueState(name string) (open, known bool) {
	q, err := c.queues.Get(name)
	if err != nil {
		return false, false
	}
	return isOpen(q), true
}

// waitForQueue parks a request whose group its queue refused. Retrying
// cannot help until the queue opens, and then the queue's own event brings
// the queue's ungrouped pods back (syncQueue), so the request neither uses
// up its retries nor is dropped. When our cache already shows the queue
// Open (or not at all), the API server's admission has not seen the change
// yet: the request is tried again shortly.
func (c *Controller) waitForQueue(req request, refused *queueRefusedError) error {
	if open, known := c.queueState(refused.queue); open || !known {
		c.wq.AddAfter(req, queueLagRetry)
		return nil
	}
	if obj := c.objectOf(req); obj != nil {
		c.recorder.Eventf(obj, corev1.EventTypeWarning, "QueueNotOpen",
			"podgroup not created: %v; it is created when queue %s opens", refused.err, refused.queue)
	}
	return nil
}

// syncQueue hands the ungrouped pods of a queue that opened (or went away)
// to the workers. Pods whose group the queue refused were parked by
// waitForQueue; this is what brings them back.
func (c *Controller) syncQueue(name string) error {
	if open, known := c.queueState(name); known && !open {
		return nil
	}
	for _, pod := range c.ungrouped() {
		upper, _ := c.ownerAnnotations(pod)
		if QueueOf(pod, upper, c.inherit) == name {
			c.wq.Add(request{kind: podKind, namespace: pod.Namespace, name: pod.Name})
		}
	}
	return nil
}

// syncPod is the pod path: create the pod's group if it does not exist (an
// existing group is left as it is, as in Volcano; the owners' paths keep
// theirs up to date), then annotate the pod.
//
// A pod whose controller (a ReplicaSet, StatefulSet, Job or DaemonSet) is
// not in our cache yet waits for it: its pods and it come through two
// watch streams, and a group built without it would miss its min-member
// and queue, and the scheduler could act on that group before it is
// corrected. The owner's add event brings its pods (the owner paths);
// without such a path (WorkLoadSupport off) the request is retried.
func (c *Controller) syncPod(ctx context.Context, ns, name string) error {
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its group goes with it (owner reference)
	}
	if err != nil {
		return err
	}
	if !c.wants(&pod.Spec) || pod.Annotations[keys.KubeGroupName] != "" || !live(pod) {
		return nil
	}
	var upper map[string]string
	if c.inherit {
		var seen bool
		if upper, seen = c.ownerAnnotations(pod); !seen {
			ref := metav1.GetControllerOf(pod)
			if c.hasOwnerPath(ownerKind(ref)) {
				return nil
			}
			return fmt.Errorf("waiting for the pod's %s %s to reach the cache", ref.Kind, ref.Name)
		}
	}
	pgName := GroupName(pod)
	if _, err := c.groups.PodGroups(ns).Get(pgName); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := c.create(ctx, pod, upper); err != nil {
			return err
		}
	}
	return c.annotate(ctx, pod, pgName)
}

// hasOwnerPath says whether an owner of this kind has a path of its own
// that groups its pods when it is added.
func (c *Controller) hasOwnerPath(k kind) bool {
	switch k {
	case replicaSetKind, statefulSetKind:
		return c.workloads
	case jobKind, daemonSetKind:
		return c.inherit
	}
	return false
}

// build is Build with the problems found reported as Warning events on the
// pod.
func (c *Controller) build(pod *corev1.Pod, upper map[string]string) *v1beta1.PodGroup {
	pg, problems := Build(pod, upper, c.inherit, c.now())
	for _, p := range problems {
		c.recorder.Event(pod, corev1.EventTypeWarning, p.Reason, p.Message)
	}
	return pg
}

// create creates the pod's group. AlreadyExists is success: another worker
// (or a pod of the same workload) was first, or our cache lagged. A refusal
// because of the queue's state is a *queueRefusedError.
func (c *Controller) create(ctx context.Context, pod *corev1.Pod, upper map[string]string) error {
	pg := c.build(pod, upper)
	_, err := c.vc.SchedulingV1beta1().PodGroups(pod.Namespace).Create(ctx, pg, metav1.CreateOptions{FieldManager: fieldManager})
	switch {
	case err == nil:
		c.metrics.created.Inc()
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	case c.refusedForQueue(err, queueName(pg)):
		return &queueRefusedError{queue: queueName(pg), err: err}
	}
	return fmt.Errorf("create podgroup %s/%s: %w", pod.Namespace, pg.Name, err)
}

// queueName is the queue of a group; empty is the CRD default.
func queueName(pg *v1beta1.PodGroup) string {
	if pg.Spec.Queue == "" {
		return keys.DefaultQueue
	}
	return pg.Spec.Queue
}

// createOrUpdate is the owners' path: the group is made to match what the
// pod (the owner's current template) and its owners say now.
func (c *Controller) createOrUpdate(ctx context.Context, pod *corev1.Pod) error {
	upper, _ := c.ownerAnnotations(pod)
	pgName := GroupName(pod)
	existing, err := c.groups.PodGroups(pod.Namespace).Get(pgName)
	if apierrors.IsNotFound(err) {
		return c.create(ctx, pod, upper)
	}
	if err != nil {
		return err
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
	if _, err := c.vc.SchedulingV1beta1().PodGroups(pod.Namespace).Patch(ctx, pgName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("patch podgroup %s/%s: %w", pod.Namespace, pgName, err)
	}
	c.metrics.updated.Inc()
	c.recorder.Eventf(pod, corev1.EventTypeNormal, "PodGroupUpdated", "updated podgroup %s to match the pod and its owners", pgName)
	return nil
}

// annotate writes scheduling.k8s.io/group-name into the pod with a
// strategic-merge patch. A different existing value is never overwritten:
// the pod already belongs elsewhere, which we report. The patch carries the
// cached resourceVersion, so a value set by someone else after our read
// makes it fail with Conflict (and be retried) rather than be overwritten.
func (c *Controller) annotate(ctx context.Context, pod *corev1.Pod, pgName string) error {
	switch cur := pod.Annotations[keys.KubeGroupName]; cur {
	case pgName:
		return nil
	case "":
	default:
		c.recorder.Eventf(pod, corev1.EventTypeWarning, "GroupNameConflict",
			"pod already belongs to podgroup %q; not moving it to %q", cur, pgName)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": pod.ResourceVersion,
		"annotations":     map[string]string{keys.KubeGroupName: pgName},
	}})
	if err != nil {
		return err
	}
	_, err = c.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("annotate pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.metrics.grouped.Inc()
	return nil
}

// ownerAnnotations merges the annotations of the pod's owners that can
// carry Volcano settings (ReplicaSet, StatefulSet, DaemonSet, batch Job), in
// owner-reference order; the first owner to set a key wins. Owners are read
// from the informer caches, never with a GET per pod. seen is false when
// the pod's controller is of one of these kinds but not in the cache (not
// yet, or only an older object of the same name).
func (c *Controller) ownerAnnotations(pod *corev1.Pod) (out map[string]string, seen bool) {
	out, seen = map[string]string{}, true
	for i := range pod.OwnerReferences {
		ref := &pod.OwnerReferences[i]
		var (
			obj metav1.Object
			err error
		)
		switch ownerKind(ref) {
		case replicaSetKind:
			obj, err = c.replicaSets.ReplicaSets(pod.Namespace).Get(ref.Name)
		case statefulSetKind:
			obj, err = c.statefulSets.StatefulSets(pod.Namespace).Get(ref.Name)
		case daemonSetKind:
			obj, err = c.daemonSets.DaemonSets(pod.Namespace).Get(ref.Name)
		case jobKind:
			obj, err = c.jobs.Jobs(pod.Namespace).Get(ref.Name)
		default:
			continue
		}
		// A missing owner, or one with the same name but another UID (a
		// recreated object), has nothing to say about this pod.
		if err != nil || obj.GetUID() != ref.UID {
			if ptr.Deref(ref.Controller, false) {
				seen = false
			}
			continue
		}
		for k, v := range obj.GetAnnotations() {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out, seen
}

func (c *Controller) syncReplicaSet(ctx context.Context, ns, name string) error {
	rs, err := c.replicaSets.ReplicaSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // its group is garbage-collected with it
	}
	if err != nil {
		return err
	}
	if replicasOf(rs.Spec.Replicas) == 0 {
		return c.deleteGroup(ctx, rs)
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil // an invalid selector will not heal by retrying
	}
	return c.syncOwned(ctx, rs, sel)
}

func (c *Controller) syncStatefulSet(ctx context.Context, ns, name string) error {
	sts, err := c.statefulSets.StatefulSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if replicasOf(sts.Spec.Replicas) == 0 {
		return c.deleteGroup(ctx, sts)
	}
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return nil
	}
	// During a rolling update only the pods of the update revision describe
	// what the group should become; older replicas are on their way out.
	rev, err := labels.NewRequirement(appsv1.ControllerRevisionHashLabelKey, "=", []string{sts.Status.UpdateRevision})
	if err != nil {
		return nil // not a valid label value yet: nothing can match it
	}
	return c.syncOwned(ctx, sts, sel.Add(*rev))
}

// syncJob and syncDaemonSet bring the group of a Job's or DaemonSet's
// pods to what the owner says: when it is first seen (its pods may have
// been waiting for it) and when its annotations change. Unlike the
// WorkLoadSupport path they never delete the group: a finished Job keeps
// it, as Volcano's does, until the garbage collector takes both.
func (c *Controller) syncJob(ctx context.Context, ns, name string) error {
	j, err := c.jobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.Spec.Selector == nil {
		return nil // not yet defaulted: nothing to select
	}
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return nil
	}
	return c.syncOwned(ctx, j, sel)
}

func (c *Controller) syncDaemonSet(ctx context.Context, ns, name string) error {
	ds, err := c.daemonSets.DaemonSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		return nil
	}
	return c.syncOwned(ctx, ds, sel)
}

// live says whether a pod still runs or waits to: not being deleted, not
// Failed (evicted pods linger as Failed) and not Succeeded. Only a live pod
// is ever the template of a group or given one.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded
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
	if _, err := c.groups.PodGroups(ns).Get(pgName); apierrors.IsNotFound(err) {
		return nil
	}
	err := c.vc.SchedulingV1beta1().PodGroups(ns).Delete(ctx, pgName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete podgroup %s/%s: %w", ns, pgName, err)
	}
	return nil
}

// syncOwned is the owners' path: the group of owner is created or brought
// up to date from the owner's live pods that sel selects, and those pods
// are annotated.
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
