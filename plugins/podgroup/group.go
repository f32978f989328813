package podgroup

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The writes both paths share: create a group, annotate a pod.

// fieldManager names our writes in managedFields.
const fieldManager = "podgroup-controller"

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
