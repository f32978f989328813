// Package describe is the 'describe NAME' of a kind that needs no more
// than its Kind says (jobflow, jobtemplate): the object's header, the
// Kind's description body, then its events.
package describe

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Options holds the input of a kind's 'describe'.
type Options[T any, PT kind.Object[T], L runtime.Object] struct {
	vcprinters.DescribeOptions
	kind *kind.Kind[T, PT, L]
}

// NewCmd is k's 'describe NAME', with k.Help.Describe.
func NewCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options[T, PT, L]{kind: k, DescribeOptions: vcprinters.DescribeOptions{IOStreams: streams, Factory: f,
		NoName: "name the " + k.Name + " to describe, e.g. 'kubectl vc " + k.Name + " describe " + k.Example + "'"}}
	cmd := k.Help.Describe.Command("describe NAME")
	cmd.ValidArgsFunction = k.NameArg(f)
	cmd.RunE = util.RunE(o)
	util.AddNameFlag(cmd, k.InWords(), true, k.NameFlag(f))
	o.AddOutputFlag(cmd)
	return cmd
}

// Validate checks -o and the name.
func (o *Options[T, PT, L]) Validate() error {
	if err := util.ValidateOutput(o.Output, "json", "yaml"); err != nil {
		return err
	}
	return o.kind.ValidateName(o.Name)
}

// Run prints the description; only the object itself must be readable.
func (o *Options[T, PT, L]) Run(ctx context.Context) error {
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
