package queue

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

func newOpenCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, "open", busv1alpha1.OpenQueueAction, schedulingv1beta1.QueueStateOpen,
		"Open one or more queues",
		templates.LongDesc(`
			Open queues by creating one OpenQueue Command per queue, as Volcano's vcctl does.
			The queue controller (Volcano's, or 'kubectl vc serve') applies it and then
			deletes the Command. With --wait, watch each queue until its state is Open.`),
		templates.Examples(`
			# Open a queue
			kubectl vc queue open team-a

			# Open two queues and wait until both are Open
			kubectl vc queue open team-a team-b --wait --timeout 1m

			# Show the Command that would be created
			kubectl vc queue open team-a --dry-run=client -o yaml`))
}
