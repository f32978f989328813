package rules

import "github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"

// QueueOf is the queue an object naming queue in its spec.queue is
// scheduled from: Volcano puts a podgroup, job or template that names
// none in the default queue, so an empty name means keys.DefaultQueue.
// The CLI and the controllers count and show such objects under default.
func QueueOf(queue string) string {
	if queue == "" {
		return keys.DefaultQueue
	}
	return queue
}
