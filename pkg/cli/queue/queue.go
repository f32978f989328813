// Package queue implements 'kubectl vc queue': create, list, describe, open,
// close, update, delete, tree and top for Volcano queues.
package queue

import (
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// DefaultCommandNamespace is where vcctl, and so Volcano's controller
// expectations, put queue Commands.
const DefaultCommandNamespace = metav1.NamespaceDefault

// Commands returns the commands of the 'queue' group (its name, aliases
// and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newCreateCmd, newListCmd, describe.Constructor(Kind), newOpenCmd, newCloseCmd, newUpdateCmd, newDeleteCmd, newTreeCmd, newTopCmd, newPendingCmd)
}
