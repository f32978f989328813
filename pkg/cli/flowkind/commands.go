package flowkind

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// command is the cobra command of h's help, h's Long and Example in
// kubectl's layout.
func command(use string, h Help) *cobra.Command {
	return &cobra.Command{Use: use, Short: h.Short, Long: templates.LongDesc(h.Long), Example: templates.Examples(h.Example)}
}

// newCreateCmd is 'create -f FILE': write.CreateFromFile over the kind.
func (k *Kind[T, PT, L]) newCreateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := write.NewCreateFromFile(f, streams, write.FileKind[T, PT]{
		Name: k.Name, GVK: k.GVK, Ref: k.Ref,
		NameRule: validation.IsDNS1123Subdomain,
		Check:    k.Check,
		Reset:    k.Reset,
		Create: func(ctx context.Context, c versioned.Interface, obj PT, opts metav1.CreateOptions) (PT, error) {
			return k.Client(c, obj.GetNamespace()).Create(ctx, obj, opts)
		},
		APIError: APIError,
	})
	cmd := command("create -f FILE", k.Help.Create)
	cmd.RunE = util.RunE(o)
	o.AddFlags(cmd)
	return cmd
}

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
		Table: func(items []T) runtime.Object { return k.Table(items, o.AllNamespaces) },
	})
	return APIError(err)
}

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
