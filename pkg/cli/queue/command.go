package queue

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// stateOf treats an empty state as Open, as the controller does.
func stateOf(q *schedulingv1beta1.Queue) schedulingv1beta1.QueueState {
	if q.Status.State == "" {
		return schedulingv1beta1.QueueStateOpen
	}
	return q.Status.State
}

// newQueueCommand builds the Command exactly as Volcano's vcctl does, so
// that Volcano's own controller acts on it: generateName
// <queue>-<lower(action)>-, a controller owner reference to the Queue (so
// the garbage collector removes it with the queue), and the same
// reference as target.
func newQueueCommand(q *schedulingv1beta1.Queue, action, namespace string) *busv1alpha1.Command {
	ref := metav1.OwnerReference{
		APIVersion:         schedulingv1beta1.SchemeGroupVersion.String(),
		Kind:               "Queue",
		Name:               q.Name,
		UID:                q.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	return &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    fmt.Sprintf("%s-%s-", q.Name, strings.ToLower(action)),
			Namespace:       namespace,
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Action:       action,
		TargetObject: ref.DeepCopy(),
	}
}

// getQueues fetches every named queue before anything is written, so that
// a missing queue fails the whole command and nothing is half-done.
func getQueues(ctx context.Context, c versioned.Interface, names []string) ([]*schedulingv1beta1.Queue, error) {
	out := make([]*schedulingv1beta1.Queue, 0, len(names))
	for _, n := range names {
		q, err := c.SchedulingV1beta1().Queues().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}
