package nodeset

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// ListOptions holds the input of 'nodeset list'.
type ListOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Names         []string
	Selector      string
	AllNamespaces bool
	Watch         bool
	ChunkSize     int64

	namespace string
	printer   printers.ResourcePrinter
	client    versioned.Interface
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List NodeSets with pod and Slurm node counts",
		Long: templates.LongDesc(`
			List NodeSets: desired, current, ready and updated pods, and how many of
			their Slurm nodes are idle, allocated, drained (or draining) and down, as the
			NodeSet controller last recorded in status.`),
		Example: templates.Examples(`
			# NodeSets of the current namespace
			kubectl vc nodeset list

			# Every namespace, as YAML
			kubectl vc nodeset list -A -o yaml

			# Watch two NodeSets scale and drain
			kubectl vc nodeset list slurm-a slurm-b --watch

			# 100 NodeSets per list request (0: all in one request)
			kubectl vc nodeset list -A --chunk-size 100`),
		ValidArgsFunction: nodeSetNames(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List NodeSets of every namespace")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// Complete records the names and resolves the namespace, the printer and
// the client.
func (o *ListOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	if o.AllNamespaces {
		o.namespace = ""
	}
	if o.printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks names, selector and chunk size.
func (o *ListOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	for _, n := range o.Names {
		if err := validateName("NodeSet", n); err != nil {
			return err
		}
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	if len(o.Names) > 0 && o.AllNamespaces {
		return util.UsageErrorf("NodeSet names need a namespace, not --all-namespaces")
	}
	if len(o.Names) > 0 && o.Selector != "" {
		return util.UsageErrorf("give NodeSet names or --selector, not both")
	}
	return nil
}

// Run lists the NodeSets (named ones by name; all of them --chunk-size at
// a time), then optionally watches from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	c := o.client.SlinkyV1beta1().NodeSets(o.namespace)
	list := &slinkyv1beta1.NodeSetList{}
	opts := metav1.ListOptions{LabelSelector: o.Selector}
	var err error
	list.Items, list.ResourceVersion, err = chunk.Read[slinkyv1beta1.NodeSet](ctx, o.Names, o.Watch, o.ChunkSize, opts,
		c.Get, c.List, func(n string) error {
			return util.UsageErrorf("NodeSet %q not found in namespace %q", n, o.namespace)
		})
	if err != nil {
		return err
	}
	if err := o.print(list.Items, list); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	return o.watch(ctx, list.ResourceVersion)
}

// watch prints every later change of the NodeSets listed (all, or the
// named ones), one row (or object) per change, until ctx ends.
func (o *ListOptions) watch(ctx context.Context, rv string) error {
	named := follow.Only(o.Names)
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.Selector}, o.client.SlinkyV1beta1().NodeSets(o.namespace).Watch,
		func(_ watch.EventType, ns *slinkyv1beta1.NodeSet) error {
			if !named(ns.Name) {
				return nil
			}
			return o.print([]slinkyv1beta1.NodeSet{*ns}, ns)
		})
}

func (o *ListOptions) print(items []slinkyv1beta1.NodeSet, obj runtime.Object) error {
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, obj, o.Out)
	}
	if len(items) == 0 {
		if !o.Watch {
			fmt.Fprintln(o.ErrOut, "No NodeSets found.")
		}
		return nil
	}
	return o.printer.PrintObj(nodeSetTable(items, o.AllNamespaces), o.Out)
}

func nodeSetTable(items []slinkyv1beta1.NodeSet, withNamespace bool) *metav1.Table {
	cols := []vcprinters.Column{{Name: "NAME"}, {Name: "DESIRED"}, {Name: "CURRENT"}, {Name: "READY"}, {Name: "UPDATED"},
		{Name: "IDLE"}, {Name: "ALLOC"}, {Name: "DRAIN"}, {Name: "DOWN"}, {Name: "AGE"}, {Name: "HASH", Wide: true}}
	if withNamespace {
		cols = append([]vcprinters.Column{{Name: "NAMESPACE"}}, cols...)
	}
	var rows [][]any
	for _, ns := range items {
		desired := int32(1)
		if ns.Spec.Replicas != nil {
			desired = *ns.Spec.Replicas
		}
		st := ns.Status
		row := []any{ns.Name, desired, st.Replicas, st.ReadyReplicas, st.UpdatedReplicas,
			st.SlurmIdle, st.SlurmAllocated, st.SlurmDrain, st.SlurmDown, vcprinters.Age(ns.CreationTimestamp), vcprinters.OrNone(st.NodeSetHash)}
		if withNamespace {
			row = append([]any{ns.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}
