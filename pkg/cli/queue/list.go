package queue

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// ListOptions holds the input of 'queue list'.
type ListOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Names     []string
	Selector  string
	Watch     bool
	ChunkSize int64

	printer printers.ResourcePrinter
	client  versioned.Interface
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List queues with their states and podgroup counts",
		Long: templates.LongDesc(`
			List queues. Podgroup counts come from each queue's status when the queue
			controller maintains it, otherwise from one list of all podgroups.`),
		Example: templates.Examples(`
			# All queues
			kubectl vc queue list

			# Two queues, with capability, deserved and guarantee
			kubectl vc queue get team-a team-b -o wide

			# Names and states only
			kubectl vc queue list -o custom-columns=NAME:.metadata.name,STATE:.status.state

			# Watch queues change state
			kubectl vc queue list --watch

			# 5 000 queues, 100 per request (0: all in one request)
			kubectl vc queue list --chunk-size 100`),
		ValidArgsFunction: completion.QueueNames(f),
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
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector, e.g. -l team=a")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// Complete records the names and resolves the printer and the client.
func (o *ListOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks names, selector, chunk size and output format.
func (o *ListOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	for _, n := range o.Names {
		if err := validateName(n); err != nil {
			return err
		}
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	if len(o.Names) > 0 && o.Selector != "" {
		return util.UsageErrorf("give queue names or --selector, not both")
	}
	return nil
}

// Run lists (and optionally watches) queues.
func (o *ListOptions) Run(ctx context.Context) error {
	c := o.client
	var err error
	list := &schedulingv1beta1.QueueList{}
	queues := c.SchedulingV1beta1().Queues()
	opts := metav1.ListOptions{LabelSelector: o.Selector}
	list.Items, list.ResourceVersion, err = chunk.Read[schedulingv1beta1.Queue](ctx, o.Names, o.Watch, o.ChunkSize, opts,
		queues.Get, queues.List, func(n string) error { return util.UsageErrorf("queue %q not found", n) })
	if err != nil {
		return err
	}
	if err := o.print(ctx, list); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	return o.watch(ctx, list.ResourceVersion)
}

func (o *ListOptions) print(ctx context.Context, list *schedulingv1beta1.QueueList) error {
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, list, o.Out)
	}
	if len(list.Items) == 0 && !o.Watch {
		fmt.Fprintln(o.ErrOut, "No queues found.")
		return nil
	}
	return o.printer.PrintObj(queueTable(list.Items, queueCounts(ctx, o.client, list.Items, o.ChunkSize)), o.Out)
}

// watch prints every later change. Counts come from status only, to keep
// one request per event out of the loop.
func (o *ListOptions) watch(ctx context.Context, rv string) error {
	named := follow.Only(o.Names)
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.Selector}, o.client.SchedulingV1beta1().Queues().Watch,
		func(_ watch.EventType, q *schedulingv1beta1.Queue) error {
			if !named(q.Name) {
				return nil
			}
			if o.PrintFlags.HumanReadable() {
				items := []schedulingv1beta1.Queue{*q}
				return o.printer.PrintObj(queueTable(items, map[string]counts{q.Name: statusCounts(q)}), o.Out)
			}
			return vcprinters.Print(o.printer, q, o.Out)
		})
}

var queueColumns = []vcprinters.Column{
	{Name: "NAME"}, {Name: "STATE"}, {Name: "WEIGHT"}, {Name: "PARENT"},
	{Name: "INQUEUE"}, {Name: "PENDING"}, {Name: "RUNNING"}, {Name: "UNKNOWN"}, {Name: "COMPLETED"},
	{Name: "AGE"},
	{Name: "CAPABILITY", Wide: true}, {Name: "DESERVED", Wide: true}, {Name: "GUARANTEE", Wide: true},
	{Name: "USAGE", Wide: true},
}

func queueTable(items []schedulingv1beta1.Queue, cnt map[string]counts) *metav1.Table {
	rows := make([][]any, 0, len(items))
	for i := range items {
		q := &items[i]
		n := cnt[q.Name]
		rows = append(rows, []any{
			q.Name, stateColumn(q), q.Spec.Weight, parentOf(q),
			n.Inqueue, n.Pending, n.Running, n.Unknown, n.Completed,
			vcprinters.Age(q.CreationTimestamp),
			vcprinters.OrNone(vcprinters.Resources(q.Spec.Capability)),
			vcprinters.OrNone(vcprinters.Resources(q.Spec.Deserved)),
			vcprinters.OrNone(vcprinters.Resources(q.Spec.Guarantee.Resource)),
			usageCompact(queueUsage(q)),
		})
	}
	return vcprinters.Table(queueColumns, rows)
}

// stateColumn is the queue's state, followed by the hierarchy problem the
// queue controller reports on it, as kubectl shows a node's conditions
// (Open,ParentCycle).
func stateColumn(q *schedulingv1beta1.Queue) string {
	if reason := rules.HierarchyProblemReason(q.Annotations[rules.HierarchyProblemAnnotation]); reason != "" {
		return string(stateOf(q)) + "," + reason
	}
	return string(stateOf(q))
}

// parentOf shows the effective parent: an empty parent means root.
func parentOf(q *schedulingv1beta1.Queue) string {
	if q.Name == keys.RootQueue {
		return "<none>"
	}
	if q.Spec.Parent == "" {
		return keys.RootQueue
	}
	return q.Spec.Parent
}
