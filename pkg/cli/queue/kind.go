package queue

import (
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Kind is the Volcano queue. Its table is list.go's: it counts podgroups.
var Kind = &kind.Kind[schedulingv1beta1.Queue, *schedulingv1beta1.Queue, *schedulingv1beta1.QueueList]{
	Name: "queue", Example: "team-a",
	GVK:           schedulingv1beta1.SchemeGroupVersion.WithKind("Queue"),
	ClusterScoped: true,
	CheckName:     rules.ValidateQueueName,
	Client: func(c versioned.Interface, _ string) kind.Client[*schedulingv1beta1.Queue, *schedulingv1beta1.QueueList] {
		return c.SchedulingV1beta1().Queues()
	},
	Describe: describeQueue,
	Why:      "queue",
	Help:     kind.Helps{Describe: describeHelp},
	Group: kind.Group{Use: "queue", Aliases: []string{"queues", "q"}, Help: kind.Help{
		Short: "Manage Volcano queues",
		Long: `
				Create, inspect, open, close, update and delete Volcano queues.

				State changes (open, close) are requested the way Volcano's vcctl does it: by
				creating a bus.volcano.sh Command that the queue controller acts on.`,
		Example: `
				# List queues with their podgroup counts
				kubectl vc queue list

				# How much of its deserved share each queue uses
				kubectl vc queue top

				# Close a queue and wait until it holds no more podgroups
				kubectl vc queue close team-a --wait --timeout 5m`,
	}},
}
