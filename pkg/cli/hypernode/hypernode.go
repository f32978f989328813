// Package hypernode implements 'kubectl vc hypernode': list, tree and
// describe of Volcano's HyperNodes, the network topology its scheduler
// places jobs with a network-topology constraint in. Members are resolved
// against the real nodes here, as the scheduler resolves them
// (pkg/rules/topology), since no object records the result.
package hypernode

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Commands returns the commands of the 'hypernode' group (its name,
// aliases and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newListCmd, newTreeCmd, describe.Constructor(Kind))
}
