// Package command implements 'kubectl vc command': the Commands (requests
// such as OpenQueue and CloseQueue) that controllers have not applied yet.
package command

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// NewCmd returns the 'command' command group.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return util.Group(&cobra.Command{
		Use:     "command",
		Aliases: []string{"commands", "cmd"},
		Short:   "Inspect pending Volcano Commands",
		Long: templates.LongDesc(`
			A Command asks a controller to act on an object (e.g. CloseQueue on a queue).
			The controller deletes it once applied, so every Command still listed is
			waiting: a Command that stays is a stuck request worth looking into.`),
		Example: templates.Examples(`
			kubectl vc command list -A`),
	}, newListCmd(f, streams))
}
