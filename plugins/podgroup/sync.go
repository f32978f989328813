package podgroup

import (
	"context"
	"encoding/json"
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

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// fieldManager names our writes in managedFields.
const fieldManager = "podgroup-controller"

func (c *Controller) sync(ctx context.Context, req request) error {
	switch req.kind {
	case replicaSetKind:
		return c.syncReplicaSet(ctx, req.namespace, req.name)
	case statefulSetKind:
		return c.syncStatefulSet(ctx, req.namespace, req.name)
	default:
		return c.syncPod(ctx, req.namespace, req.name)
	}
}

// syncPod is the standalone path: create the pod's group if it does not
// exist (an existing group is left as it is, as in Volcano; workloads keep
// theirs up to date through their own path), then annotate the pod.
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
	pgName := GroupName(pod)
	if _, err := c.groups.PodGroups(ns).Get(pgName); err != nil {
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := c.create(ctx, pod); err != nil {
			return err
		}
	}
	return c.annotate(ctx, pod, pgName)
}

// build is Build with the owners' annotations read from the listers and the
// problems found reported as Warning events on the pod.
func (c *Controller) build(pod *corev1.Pod) *v1beta1.PodGroup {
	var upper map[string]string
	if c.inherit {
		upper = c.ownerAnnotations(pod)
	}
	pg, problems := Build(pod, upper, c.inherit, c.now())
	for _, p := range problems {
		c.recorder.Event(pod, corev1.EventTypeWarning, p.Reason, p.Message)
	}
	return pg
}

// create creates the pod's group. AlreadyExists is success: another worker
// (or a pod of the same workload) was first, or our cache lagged.
func (c *Controller) create(ctx context.Context, pod *corev1.Pod) error {
	pg := c.build(pod)
	_, err := c.vc.SchedulingV1beta1().PodGroups(pod.Namespace).Create(ctx, pg, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create podgroup %s/%s: %w", pod.Namespace, pg.Name, err)
	}
	return nil
}

// createOrUpdate is the workload path: the group is made to match what the
// pod (the workload's current template) and its owners say now.
func (c *Controller) createOrUpdate(ctx context.Context, pod *corev1.Pod) error {
	pgName := GroupName(pod)
	existing, err := c.groups.PodGroups(pod.Namespace).Get(pgName)
	if apierrors.IsNotFound(err) {
		return c.create(ctx, pod)
	}
	if err != nil {
		return err
	}
	merged, changed := Merge(existing, c.build(pod))
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
	return nil
}

// ownerAnnotations merges the annotations of the pod's owners that can
// carry Volcano settings (ReplicaSet, StatefulSet, DaemonSet, batch Job), in
// owner-reference order; the first owner to set a key wins. Owners are read
// from the informer caches, never with a GET per pod.
func (c *Controller) ownerAnnotations(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, ref := range pod.OwnerReferences {
		group := ref.APIVersion
		if i := strings.Index(group, "/"); i >= 0 {
			group = group[:i]
		}
		var (
			obj metav1.Object
			err error
		)
		switch {
		case group == appsv1.GroupName && ref.Kind == "ReplicaSet":
			obj, err = c.replicaSets.ReplicaSets(pod.Namespace).Get(ref.Name)
		case group == appsv1.GroupName && ref.Kind == "StatefulSet":
			obj, err = c.statefulSets.StatefulSets(pod.Namespace).Get(ref.Name)
		case group == appsv1.GroupName && ref.Kind == "DaemonSet":
			obj, err = c.daemonSets.DaemonSets(pod.Namespace).Get(ref.Name)
		case group == "batch" && ref.Kind == "Job":
			obj, err = c.jobs.Jobs(pod.Namespace).Get(ref.Name)
		default:
			continue
		}
		// A missing owner, or one with the same name but another UID (a
		// recreated object), has nothing to say about this pod.
		if err != nil || obj.GetUID() != ref.UID {
			continue
		}
		for k, v := range obj.GetAnnotations() {
			if _, seen := out[k]; !seen {
				out[k] = v
			}
		}
	}
	return out
}

func (c *Controller) syncReplicaSet(ctx context.Context, ns, name string) error {
	rs, err := c.replicaSets.ReplicaSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // its group is garbage-collected with it
	}
	if err != nil {
		return err
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil // an invalid selector will not heal by retrying
	}
	return c.syncWorkload(ctx, rs, replicasOf(rs.Spec.Replicas), sel)
}

func (c *Controller) syncStatefulSet(ctx context.Context, ns, name string) error {
	sts, err := c.statefulSets.StatefulSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
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
	return c.syncWorkload(ctx, sts, replicasOf(sts.Spec.Replicas), sel.Add(*rev))
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

// syncWorkload is the WorkLoadSupport path of a ReplicaSet or StatefulSet.
// At zero replicas the workload's group goes; otherwise the group is created
// or brought up to date from the workload's pods and they are annotated.
func (c *Controller) syncWorkload(ctx context.Context, owner metav1.Object, replicas int32, sel labels.Selector) error {
	pgName := GroupNamePrefix + string(owner.GetUID())
	ns := owner.GetNamespace()
	if replicas == 0 {
		// The cache says whether there is anything to delete, so a
		// scaled-down ReplicaSet (Deployments keep many) costs no call.
		if _, err := c.groups.PodGroups(ns).Get(pgName); apierrors.IsNotFound(err) {
			return nil
		}
		err := c.vc.SchedulingV1beta1().PodGroups(ns).Delete(ctx, pgName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete podgroup %s/%s: %w", ns, pgName, err)
		}
		return nil
	}
	pods, err := c.pods.Pods(ns).List(sel)
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
