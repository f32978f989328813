// Package describe is the 'describe NAME' of every kind that takes its
// Kind: the object's header, the Kind's description body, its events and,
// for a kind 'kubectl vc why' explains, why's verdict on it.
package describe

import (
	"bytes"
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/verdict"
)

// Options holds the input of a kind's 'describe'.
type Options[T any, PT kind.Object[T], L runtime.Object] struct {
	Describe vcprinters.DescribeOptions
	kind     *kind.Kind[T, PT, L]
	// page is the kind's body with flags of its own (Kind.Page), if any.
	page kind.Page[PT]
}

// NewCmd is k's 'describe NAME', with k.Help.Describe: one name, given as
// an argument.
func NewCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	cmd, _ := newCmd(k, f, streams)
	cmd.Args = util.NameArgs(k.Name, 1, 1, k.Group.Use+" describe "+k.Example)
	return cmd
}

// Constructor is NewCmd over k, as a kind's command list (util.Build)
// names its commands.
func Constructor[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L]) util.Constructor {
	return func(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command { return NewCmd(k, f, streams) }
}

// NewVcctlCmd is NewCmd with the flags of vcctl's describe of the kind:
// -N/--name, another way to give the name, and -o json|yaml, the object
// itself instead of its description.
func NewVcctlCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	cmd, o := newCmd(k, f, streams)
	util.AddNameFlag(cmd, k.InWords(), true, k.NameFlag(f))
	o.Describe.AddOutputFlag(cmd)
	return cmd
}

func newCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) (*cobra.Command, *Options[T, PT, L]) {
	o := NewOptions(k, f, streams)
	cmd := k.Help.Describe.Command("describe NAME")
	cmd.ValidArgsFunction = k.NameArg(f)
	cmd.RunE = util.RunE(o)
	if k.Page != nil {
		o.page = k.Page()
		o.page.AddFlags(cmd.Flags())
	}
	return cmd, o
}

// NewOptions returns the Options of k's 'describe' over f and streams.
func NewOptions[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *Options[T, PT, L] {
	return &Options[T, PT, L]{kind: k, Describe: vcprinters.DescribeOptions{IOStreams: streams, Factory: f, ClusterScoped: k.ClusterScoped,
		NoName: "name the " + k.Name + " to describe, e.g. 'kubectl vc " + k.Group.Use + " describe " + k.Example + "'"}}
}

// Complete records the name and resolves the namespace and the clients.
func (o *Options[T, PT, L]) Complete(args []string) error { return o.Describe.Complete(args) }

// Validate checks -o, the name and the kind's own flags.
func (o *Options[T, PT, L]) Validate() error {
	if err := util.ValidateOutput(o.Describe.Output, "json", "yaml"); err != nil {
		return err
	}
	if err := o.kind.ValidateName(o.Describe.Name); err != nil {
		return err
	}
	if o.page != nil {
		return o.page.Validate()
	}
	return nil
}

// Run prints the description; only the object itself must be readable.
func (o *Options[T, PT, L]) Run(ctx context.Context) error {
	obj, err := o.kind.Client(o.Describe.Client, o.Describe.Namespace).Get(ctx, o.Describe.Name, metav1.GetOptions{})
	if err != nil {
		return o.kind.NotFound(err, o.Describe.Name, o.Describe.Namespace)
	}
	if printed, err := o.Describe.PrintObject(obj); printed {
		return err
	}
	// Written out whole once done: a body that fails prints nothing.
	var out bytes.Buffer
	d := vcprinters.NewDescriber(&out)
	if o.kind.Header != nil {
		o.kind.Header(d, obj)
	} else {
		d.Header(obj)
	}
	switch {
	case o.page != nil:
		if err := o.page.Describe(ctx, &o.Describe, d, obj); err != nil {
			return err
		}
	case o.kind.Describe != nil:
		o.kind.Describe(ctx, &o.Describe, d, obj)
	}
	d.Events(ctx, o.Describe.Kube, obj.GetNamespace(), o.kind.GVK.Kind, obj)
	if o.kind.Why != "" {
		verdict.Describe(ctx, d, o.Describe.Client, o.Describe.Kube, analysis.Kind(o.kind.Why), obj.GetNamespace(), obj.GetName())
	}
	d.Flush()
	_, err = o.Describe.Out.Write(out.Bytes())
	return err
}
