package flowkind

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// DeleteOptions holds the input of the kind's 'delete'.
type DeleteOptions[T any, PT write.Object[T], L runtime.Object] struct {
	write.DeleteOptions
	kind *Kind[T, PT, L]
}

func (k *Kind[T, PT, L]) newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions[T, PT, L]{DeleteOptions: write.NewDeleteOptions(f, streams), kind: k}
	cmd := command("delete NAME... | -f FILE", k.Help.Delete)
	cmd.ValidArgsFunction = k.Names().Names(f)
	cmd.RunE = util.RunE(o)
	o.AddFlags(cmd, "Wait until the "+k.plural()+" are gone", "How long --wait waits (0 waits forever)")
	o.AddFileFlag(cmd, k.GVK)
	util.AddNameFlag(cmd, k.Words, false, k.Names().Flag(f))
	return cmd
}

// Validate checks names and flags before any request.
func (o *DeleteOptions[T, PT, L]) Validate() error {
	return o.DeleteOptions.Validate(o.kind.Name, o.kind.Name+" delete "+o.kind.Example, o.kind.ValidateName)
}

// Run checks that every object named exists, then deletes them.
func (o *DeleteOptions[T, PT, L]) Run(ctx context.Context) error {
	k := o.kind
	c := k.Client(o.Client, o.Namespace)
	return write.DeleteNamed(ctx, &o.DeleteOptions, write.Deletable[PT, L]{
		Kind: k.Name, Ref: k.Ref, Get: c.Get, Delete: c.Delete, List: c.List, Watch: c.Watch,
		NotFound: func(err error, name string) error { return k.NotFound(err, name, o.Namespace) },
		Hint:     "finalizers may hold them",
	})
}
