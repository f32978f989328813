package jobflow

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobtemplate"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// ListOptions holds the input of 'jobflow list'.
type ListOptions struct {
	list.Options
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{Options: list.NewOptions(f, streams).Named("jobflow", validateName)}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List job flows with how far their steps got",
		Long: templates.LongDesc(`
			List Volcano JobFlows of a namespace (-n) or of all namespaces (-A): each flow's
			phase and its steps by progress: DONE (the step's job Completed), RUNNING (its
			job exists and has not finished), FAILED (its job Failed, was Terminated or
			Aborted) and WAITING (no job made yet), as Volcano's jobflow controller records
			them in the flow's status. -o wide adds the steps in order and the retain
			policy; 'jobflow describe' draws the steps with why each waits. vcctl's
			'jobflow get -N NAME' works too.`),
		Example: templates.Examples(`
			# Flows of the current namespace and their progress
			kubectl vc jobflow list

			# Follow a flow as its steps run
			kubectl vc jobflow get pipeline --watch

			# Names only, for scripts
			kubectl vc jobflow list -A -o name`),
		ValidArgsFunction: Kind.Names(f),
		RunE:              util.RunE(o),
	}
	o.Options.AddFlags(cmd, list.Flags{AllNamespaces: "List job flows of every namespace", Selector: "Label selector, e.g. -l team=nlp", Watch: true})
	util.AddNameFlag(cmd, "job flow", false, Kind.Flag(f))
	return cmd
}

// Run lists the flows, --chunk-size at a time, then optionally watches.
func (o *ListOptions) Run(ctx context.Context) error {
	c := o.Client.FlowV1alpha1().JobFlows(o.Namespace)
	err := list.Run(ctx, &o.Options, list.Kind[flowv1alpha1.JobFlow, *flowv1alpha1.JobFlow, *flowv1alpha1.JobFlowList]{
		Name: "jobflow", Plural: "job flows", Get: c.Get, List: c.List, Watch: c.Watch,
		AsList: func(items []flowv1alpha1.JobFlow, rv string) runtime.Object {
			return &flowv1alpha1.JobFlowList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}
		},
		Table: func(items []flowv1alpha1.JobFlow) runtime.Object { return Table(items, o.AllNamespaces) },
	})
	return jobtemplate.APIError(err)
}

var columns = []vcprinters.Column{
	{Name: "NAME"}, {Name: "PHASE"}, {Name: "STEPS"}, {Name: "DONE"}, {Name: "RUNNING"}, {Name: "FAILED"}, {Name: "WAITING"}, {Name: "AGE"},
	{Name: "FLOW", Wide: true}, {Name: "RETAIN", Wide: true},
}

// Table is the table of 'jobflow list'; allNamespaces adds NAMESPACE.
func Table(items []flowv1alpha1.JobFlow, allNamespaces bool) *metav1.Table {
	cols := columns
	if allNamespaces {
		cols = append([]vcprinters.Column{{Name: "NAMESPACE"}}, columns...)
	}
	rows := make([][]any, 0, len(items))
	for i := range items {
		jf := &items[i]
		steps := Steps(Input{Flow: jf, Jobs: recorded(jf)})
		c := Count(steps)
		var order []string
		for _, s := range steps {
			order = append(order, s.Name)
		}
		retain := string(jf.Spec.JobRetainPolicy)
		if retain == "" {
			retain = string(flowv1alpha1.Retain)
		}
		var row []any
		if allNamespaces {
			row = append(row, jf.Namespace)
		}
		row = append(row, jf.Name, string(phaseOf(jf)), c.Steps, c.Done, c.Running, c.Failed, c.Waiting,
			vcprinters.Age(jf.CreationTimestamp), vcprinters.OrNone(strings.Join(order, ",")), retain)
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}
