package flowkind

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// DescribeOptions holds the input of the kind's 'describe'.
type DescribeOptions[T any, PT write.Object[T], L runtime.Object] struct {
	vcprinters.DescribeOptions
	kind *Kind[T, PT, L]
}

func (k *Kind[T, PT, L]) newDescribeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DescribeOptions[T, PT, L]{kind: k, DescribeOptions: vcprinters.DescribeOptions{IOStreams: streams, Factory: f,
		NoName: "name the " + k.Name + " to describe, e.g. 'kubectl vc " + k.Name + " describe " + k.Example + "'"}}
	cmd := command("describe NAME", k.Help.Describe)
	cmd.ValidArgsFunction = k.Names().Name(f)
	cmd.RunE = util.RunE(o)
	util.AddNameFlag(cmd, k.Words, true, k.Names().Flag(f))
	o.AddOutputFlag(cmd)
	return cmd
}

// Validate checks -o and the name.
func (o *DescribeOptions[T, PT, L]) Validate() error {
	if err := util.ValidateOutput(o.Output, "json", "yaml"); err != nil {
		return err
	}
	return o.kind.ValidateName(o.Name)
}

// Run prints the description; only the object itself must be readable.
func (o *DescribeOptions[T, PT, L]) Run(ctx context.Context) error {
	obj, err := o.kind.Client(o.Client, o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return o.kind.NotFound(err, o.Name, o.Namespace)
	}
	if printed, err := o.PrintObject(obj); printed {
		return err
	}
	d := vcprinters.NewDescriber(o.Out)
	defer d.Flush()
	d.Header(obj)
	o.kind.Describe(ctx, &o.DescribeOptions, d, obj)
	d.Events(ctx, o.Kube, obj.GetNamespace(), o.kind.GVK.Kind, obj)
	return nil
}
