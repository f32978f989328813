package rules

import (
	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// QueueAnnotation is the queue a pod's or its owner's annotations name:
// scheduling.volcano.sh/queue-name, else volcano.sh/queue-name. ok is
// false when neither key is present; a present key counts even when its
// value is empty (the podgroup controller then puts the group in the
// default queue, as Volcano's does).
func QueueAnnotation(annotations map[string]string) (queue string, ok bool) {
	if q, ok := annotations[keys.QueueName]; ok {
		return q, true
	}
	if q, ok := annotations[keys.VolcanoQueueName]; ok {
		return q, true
	}
	return "", false
}

// IsQueueAnnotation tells whether key is one of the annotations
// QueueAnnotation reads (for a cache that keeps only what is read).
func IsQueueAnnotation(key string) bool {
	return key == keys.QueueName || key == keys.VolcanoQueueName
}

// PodQueue is the queue a pod names itself, for the CLI's reading: its
// queue annotations (QueueAnnotation), else the label Volcano's job
// controller puts on a Job's pods; "" when it names none.
func PodQueue(p *corev1.Pod) string {
	if q, _ := QueueAnnotation(p.Annotations); q != "" {
		return q
	}
	return p.Labels[batchv1alpha1.QueueNameLabel]
}

// QueueStatusKept says whether a queue's status is written by a queue
// controller: its state is then set, and its status counts are kept. A
// queue without a state is Open (StateOrOpen) and its podgroups must be
// counted to know its counts.
func QueueStatusKept(q *v1beta1.Queue) bool { return q.Status.State != "" }
