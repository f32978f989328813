package queue

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

func newCloseCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, "close", busv1alpha1.CloseQueueAction, schedulingv1beta1.QueueStateClosed,
		"Close one or more queues",
		templates.LongDesc(`
			Close queues by creating one CloseQueue Command per queue, as Volcano's vcctl does.
			A closed queue accepts no new podgroups. A queue that still holds podgroups
			is Closing until they are gone, then Closed. With --wait, watch each queue
			until it is Closed, reporting on stderr the podgroups still holding it.
			The root queue cannot be closed.`),
		templates.Examples(`
			# Close a queue
			kubectl vc queue close team-a

			# Close it and wait up to 10 minutes for its podgroups to finish
			kubectl vc queue close team-a --wait --timeout 10m

			# Put the Command in another namespace
			kubectl vc queue close team-a --command-namespace volcano-system`))
}
