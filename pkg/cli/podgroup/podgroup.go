// Package podgroup implements 'kubectl vc podgroup': list and describe.
package podgroup

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Commands returns the commands of the 'podgroup' group (its name, aliases
// and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newListCmd, describe.Constructor(Kind))
}
