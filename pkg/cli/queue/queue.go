// Package queue implements 'kubectl vc queue': create, list, describe, open,
// close, update, delete, tree and top for Volcano queues.
package queue

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// DefaultCommandNamespace is where vcctl, and so Volcano's controller
// expectations, put queue Commands.
const DefaultCommandNamespace = "default"

// NewCmd returns the 'queue' command group.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return util.Group(&cobra.Command{
		Use:     "queue",
		Aliases: []string{"queues", "q"},
		Short:   "Manage Volcano queues",
		Long: templates.LongDesc(`
			Create, inspect, open, close, update and delete Volcano queues.

			State changes (open, close) are requested the way Volcano's vcctl does it: by
			creating a bus.volcano.sh Command that the queue controller acts on.`),
		Example: templates.Examples(`
			# List queues with their podgroup counts
			kubectl vc queue list

			# How much of its deserved share each queue uses
			kubectl vc queue top

			# Close a queue and wait until it holds no more podgroups
			kubectl vc queue close team-a --wait --timeout 5m`),
	},
		newCreateCmd(f, streams),
		newListCmd(f, streams),
		newDescribeCmd(f, streams),
		newOpenCmd(f, streams),
		newCloseCmd(f, streams),
		newUpdateCmd(f, streams),
		newDeleteCmd(f, streams),
		newTreeCmd(f, streams),
		newTopCmd(f, streams),
	)
}
