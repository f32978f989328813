package queue

import (
	"context"
	"fmt"
	"io"
	"time"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// queueWait is a wait on the named queues.
func queueWait(c versioned.Interface, names []string, timeout time.Duration) wait.Spec {
	qs := c.SchedulingV1beta1().Queues()
	return wait.Spec{Kind: "queue", Names: names, Timeout: timeout, ListWatch: wait.ListWatch(names, qs.List, qs.Watch)}
}

// describeProgress says where a queue stands, including what still holds a
// Closing queue: its podgroups that have not completed.
func describeProgress(q *schedulingv1beta1.Queue) string {
	state := stateOf(q)
	c := statusCounts(q)
	if state == schedulingv1beta1.QueueStateClosing && c.Active() > 0 {
		return fmt.Sprintf("%s, %d podgroup(s) still in the queue (inqueue %d, pending %d, running %d, unknown %d)",
			state, c.Active(), c.Inqueue, c.Pending, c.Running, c.Unknown)
	}
	return string(state)
}

// waitForState watches the queues until each has status.state == target,
// writing a progress line to errOut whenever a queue's state or remaining
// podgroups change. It returns a one-line error on timeout that names the
// queues that did not get there and their current state.
func waitForState(ctx context.Context, c versioned.Interface, names []string, target schedulingv1beta1.QueueState, timeout time.Duration, errOut io.Writer) error {
	return wait.For(ctx, queueWait(c, names, timeout), wait.Condition[*schedulingv1beta1.Queue]{
		Target: string(target),
		Progress: func(q *schedulingv1beta1.Queue) (string, bool) {
			return describeProgress(q), stateOf(q) == target
		},
		Unseen: "no status seen",
		Hint:   " (is the queue controller running? see 'kubectl vc command list -A')",
	}, errOut)
}

// waitForDeletion watches until every named queue is gone.
func waitForDeletion(ctx context.Context, c versioned.Interface, names []string, timeout time.Duration) error {
	return wait.Deleted[*schedulingv1beta1.Queue](ctx, queueWait(c, names, timeout), "finalizers or a stuck controller may hold them")
}
