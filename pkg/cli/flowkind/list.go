package flowkind

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// ListOptions holds the input of the kind's 'list'.
type ListOptions[T any, PT write.Object[T], L runtime.Object] struct {
	list.Options
	kind *Kind[T, PT, L]
}

func (k *Kind[T, PT, L]) newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions[T, PT, L]{Options: list.NewOptions(f, streams).Named(k.Name, k.ValidateName), kind: k}
	cmd := command("list [NAME...]", k.Help.List)
	cmd.Aliases = []string{"get", "ls"}
	cmd.ValidArgsFunction = k.Names().Names(f)
	cmd.RunE = util.RunE(o)
	o.Options.AddFlags(cmd, list.Flags{AllNamespaces: "List " + k.plural() + " of every namespace", Selector: "Label selector, e.g. -l team=nlp", Watch: true})
	util.AddNameFlag(cmd, k.Words, false, k.Names().Flag(f))
	return cmd
}

// Run lists the objects, --chunk-size at a time, then optionally watches.
func (o *ListOptions[T, PT, L]) Run(ctx context.Context) error {
	k := o.kind
	c := k.Client(o.Client, o.Namespace)
	err := list.Run(ctx, &o.Options, list.Kind[T, PT, L]{
		Name: k.Name, Plural: k.plural(), Get: c.Get, List: c.List, Watch: c.Watch, AsList: k.AsList,
		Stream: true, // jobflow's and jobtemplate's tables read each object alone
		Table:  func(items []T) runtime.Object { return k.Table(items, o.AllNamespaces) },
	})
	return APIError(err)
}
