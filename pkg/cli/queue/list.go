package queue

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// ListOptions holds the input of 'queue list'.
type ListOptions struct {
	List list.Options
	// chunkFlag tells whether --chunk-size was given (countPages).
	chunkFlag *pflag.Flag
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{List: list.NewOptions(f, streams).Named("queue", validateName)}
	o.List.ClusterScoped = true
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
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.List.AddFlags(cmd, list.Flags{Selector: "Label selector, e.g. -l team=a", Watch: true})
	o.chunkFlag = cmd.Flags().Lookup("chunk-size")
	return cmd
}

// Complete records the names and resolves the namespace, the printer and
// the client, as every list does (list.Options).
func (o *ListOptions) Complete(args []string) error { return o.List.Complete(args) }

// Validate checks --chunk-size and --selector, as every list does.
func (o *ListOptions) Validate() error { return o.List.Validate() }

// Run lists (and optionally watches) queues. Watched rows take their
// counts from status only, to keep one request per event out of the loop.
func (o *ListOptions) Run(ctx context.Context) error {
	return list.Run(ctx, &o.List, Kind, list.Rows[schedulingv1beta1.Queue, *schedulingv1beta1.Queue]{
		// Not Stream: for queues without a status the table lists every
		// podgroup to count them, which per page would be once a page.
		Table: func(items []schedulingv1beta1.Queue) runtime.Object {
			return queueTable(items, queueCounts(ctx, o.List.Client, items, countPages(o.chunkFlag, o.List.ChunkSize)))
		},
		WatchTable: func(q *schedulingv1beta1.Queue) runtime.Object {
			return queueTable([]schedulingv1beta1.Queue{*q}, map[string]counts{q.Name: statusCounts(q)})
		},
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
		return string(rules.StateOrOpen(q.Status.State)) + "," + reason
	}
	return string(rules.StateOrOpen(q.Status.State))
}

// parentOf shows the effective parent (rules.EffectiveParent), <none>
// for root.
func parentOf(q *schedulingv1beta1.Queue) string { return vcprinters.OrNone(rules.EffectiveParent(q)) }
