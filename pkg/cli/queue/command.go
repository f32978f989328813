package queue

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/request"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// newQueueCommand builds the Command for queue q as vcctl does, in
// namespace (the queue is cluster-scoped; the queue controller reads
// Commands of every namespace).
func newQueueCommand(q *schedulingv1beta1.Queue, action, namespace string) *busv1alpha1.Command {
	return request.New(q, Kind.GVK, action, namespace)
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
