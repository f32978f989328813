package list

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// KindOptions holds the input of the 'list' of a kind that needs no more
// than its Kind says (jobflow, jobtemplate).
type KindOptions[T any, PT kind.Object[T], L runtime.Object] struct {
	List Options
	kind *kind.Kind[T, PT, L]
}

// NewCmd is k's 'list [NAME...]', with k.Help.List.
func NewCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &KindOptions[T, PT, L]{List: NewOptions(f, streams).Named(k.Name, k.ValidateName), kind: k}
	cmd := k.Help.List.Command("list [NAME...]")
	cmd.Aliases = []string{"get", "ls"}
	cmd.ValidArgsFunction = k.NameArgs(f)
	cmd.RunE = util.RunE(o)
	o.List.AddFlags(cmd, Flags{AllNamespaces: "List " + k.Plural() + " of every namespace", Selector: "Label selector, e.g. -l team=nlp", Watch: true})
	util.AddNameFlag(cmd, k.InWords(), false, k.NameFlag(f))
	return cmd
}

// Complete records the names and resolves the namespace, the printer and
// the client.
func (o *KindOptions[T, PT, L]) Complete(args []string) error { return o.List.Complete(args) }

// Validate checks --chunk-size, --selector and the names.
func (o *KindOptions[T, PT, L]) Validate() error { return o.List.Validate() }

// Run lists the objects, --chunk-size at a time, then optionally watches.
func (o *KindOptions[T, PT, L]) Run(ctx context.Context) error {
	k := o.kind
	err := Run(ctx, &o.List, k, Rows[T, PT]{Stream: true}) // the table reads each object alone
	return k.APIError(err)
}
