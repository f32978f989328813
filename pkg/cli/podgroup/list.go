package podgroup

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

var phases = []schedulingv1beta1.PodGroupPhase{
	schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupUnknown,
	schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupCompleted,
}

// ListOptions holds the input of 'podgroup list'.
type ListOptions struct {
	List list.Options
	list.QueuePhase
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{List: list.NewOptions(f, streams).Named("podgroup", validateName)}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List podgroups",
		Long: templates.LongDesc(`
			List podgroups of a namespace (-n) or of all namespaces (-A), optionally only those of one queue or phase.`),
		Example: templates.Examples(`
			# Podgroups of the current namespace
			kubectl vc podgroup list

			# Pending podgroups of queue team-a anywhere
			kubectl vc pg get -A --queue team-a --phase Pending

			# Names only, for scripts
			kubectl vc pg list -n batch -o name

			# Every podgroup in one list request rather than 500 per request
			kubectl vc pg list -A --chunk-size 0`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.List.AddFlags(cmd, list.Flags{AllNamespaces: "List podgroups of every namespace", Selector: "Label selector, e.g. -l app=train", Watch: true})
	o.QueuePhase.AddFlags(cmd, completion.Queues.Flag(f), "podgroups", util.Names(phases))
	return cmd
}

// Complete records the names and resolves the namespace, the printer and
// the client, as every list does (list.Options).
func (o *ListOptions) Complete(args []string) error { return o.List.Complete(args) }

// Validate checks names and filters before any request.
func (o *ListOptions) Validate() error {
	if err := o.List.Validate(); err != nil {
		return err
	}
	return o.QueuePhase.Validate(util.Names(phases))
}

func (o *ListOptions) keep(pg *schedulingv1beta1.PodGroup) bool {
	return o.Keeps(queueOf(pg), phaseOf(pg))
}

// Run lists podgroups (filters on queue and phase are applied here: the
// API server cannot select custom resources by spec fields).
func (o *ListOptions) Run(ctx context.Context) error {
	return list.Run(ctx, &o.List, Kind, list.Rows[schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroup]{
		Keep:   o.keep,
		Stream: true, // the table of a page is that page's alone
	})
}

// podGroupTable is the table of 'podgroup list'; allNamespaces adds NAMESPACE first.
func podGroupTable(items []schedulingv1beta1.PodGroup, allNamespaces bool) *metav1.Table {
	cols := []vcprinters.Column{}
	if allNamespaces {
		cols = append(cols, vcprinters.Column{Name: "NAMESPACE"})
	}
	cols = append(cols, []vcprinters.Column{
		{Name: "NAME"}, {Name: "PHASE"}, {Name: "MINMEMBER"}, {Name: "RUNNING"}, {Name: "QUEUE"}, {Name: "AGE"},
		{Name: "PRIORITYCLASS", Wide: true}, {Name: "MINRESOURCES", Wide: true},
	}...)
	rows := make([][]any, 0, len(items))
	for i := range items {
		pg := &items[i]
		var row []any
		if allNamespaces {
			row = append(row, pg.Namespace)
		}
		minRes := ""
		if pg.Spec.MinResources != nil {
			minRes = vcprinters.Resources(*pg.Spec.MinResources)
		}
		row = append(row, pg.Name, phaseOf(pg), pg.Spec.MinMember, pg.Status.Running, queueOf(pg),
			vcprinters.Age(pg.CreationTimestamp), vcprinters.OrNone(pg.Spec.PriorityClassName), vcprinters.OrNone(minRes))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}

// queueOf returns the queue a podgroup is scheduled from (rules.QueueOf).
func queueOf(pg *schedulingv1beta1.PodGroup) string { return rules.QueueOf(pg.Spec.Queue) }

// phaseOf returns the phase; a podgroup the scheduler has not seen yet is Pending.
func phaseOf(pg *schedulingv1beta1.PodGroup) string {
	if pg.Status.Phase == "" {
		return string(schedulingv1beta1.PodGroupPending)
	}
	return string(pg.Status.Phase)
}
