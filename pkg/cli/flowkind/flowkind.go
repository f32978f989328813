// Package flowkind holds what the two flow.volcano.sh kinds (jobflow,
// jobtemplate) share, so that neither imports the other: what to say when
// the server does not serve them, and their commands.
package flowkind

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// NotServed says what to do when the server has no flow.volcano.sh
// kinds: they are Volcano's, installed with its jobflow controllers.
const NotServed = "the server has no Volcano JobFlows and JobTemplates (flow.volcano.sh/v1alpha1): install Volcano with its jobflow controllers, which run them; 'kubectl vc install' leaves these CRDs to Volcano"

// Commands are the commands of a flow.volcano.sh kind (jobflow,
// jobtemplate): create -f, list, describe and delete, all of them the
// shared commands over its Kind.
func Commands[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		write.NewCreateCmd(k, f, streams),
		list.NewCmd(k, f, streams),
		describe.NewVcctlCmd(k, f, streams),
		write.NewDeleteCmd(k, f, streams),
	}
}
