package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
)

// Kind is the pod, as 'kubectl vc pod' shows it: Kubernetes' own kind,
// read through the Kubernetes client (no Client here), listed by its
// Volcano job and queue.
var Kind = &kind.Kind[corev1.Pod, *corev1.Pod, *corev1.PodList]{
	Name: "pod", Example: "train-worker-0",
	GVK: corev1.SchemeGroupVersion.WithKind("Pod"),
	Group: kind.Group{Use: "pod", Aliases: []string{"pods", "po"}, Help: kind.Help{
		Short: "List the pods of Volcano jobs and queues",
		Long: `
				List the pods Volcano schedules, with their job, task and queue.`,
		Example: `
				kubectl vc pod list --job train`,
	}},
}
