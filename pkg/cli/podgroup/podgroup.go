// Package podgroup implements 'kubectl vc podgroup': list and describe.
package podgroup

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// NewCmd returns the 'podgroup' command group.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return util.Group(&cobra.Command{
		Use:     "podgroup",
		Aliases: []string{"podgroups", "pg"},
		Short:   "Inspect Volcano podgroups",
		Long: templates.LongDesc(`
			List and describe Volcano podgroups: the gangs of pods the scheduler admits together.`),
		Example: templates.Examples(`
			# Podgroups of every namespace in queue team-a
			kubectl vc podgroup list -A --queue team-a

			# One podgroup with its member pods and events
			kubectl vc pg describe my-job -n batch`),
	}, newListCmd(f, streams), newDescribeCmd(f, streams))
}
