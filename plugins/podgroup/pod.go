package podgroup

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

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
			if o := ownerKindOfRef(ref); o != nil && o.path(c) {
				return nil
			}
			return fmt.Errorf("waiting for the pod's %s %s to reach the cache", ref.Kind, ref.Name)
		}
	}
	pgName := GroupName(pod)
	if !c.groups.Has(ns, pgName) {
		if err := c.create(ctx, pod, upper); err != nil {
			return err
		}
	}
	return c.annotate(ctx, pod, pgName)
}

// wants says whether a pod is ours to group: it uses one of our schedulers.
func (c *Controller) wants(spec *corev1.PodSpec) bool {
	return slices.Contains(c.schedulers, spec.SchedulerName)
}

// live says whether a pod still runs or waits to: not being deleted, not
// Failed (evicted pods linger as Failed) and not Succeeded. Only a live pod
// is ever the template of a group or given one.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded
}
