package podgroup

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Queue parking: a group refused because its queue is not Open waits for
// the queue to open instead of using up its retries.

// queueLagRetry is how long a request waits when the API server refused a
// group because of a queue's state that our cache already shows as Open:
// the server has not caught up yet. Such a wait does not count as a retry.
const queueLagRetry = time.Second

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

// isOpen says whether a queue accepts new groups; no state is Open.
func isOpen(q *v1beta1.Queue) bool {
	return rules.StateOrOpen(q.Status.State) == v1beta1.QueueStateOpen
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
