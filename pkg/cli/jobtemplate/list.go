package jobtemplate

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/job"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// ListOptions holds the input of 'jobtemplate list'.
type ListOptions struct {
	list.Options
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{Options: list.NewOptions(f, streams).Named("jobtemplate", ValidateName)}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List job templates with the jobs made from them",
		Long: templates.LongDesc(`
			List Volcano JobTemplates of a namespace (-n) or of all namespaces (-A): each
			template's queue, minAvailable and tasks (name=replicas), and the Volcano Jobs
			JobFlows made from it, as Volcano's jobtemplate controller records them in the
			template's status. -o wide adds the scheduler. vcctl's 'jobtemplate get -N NAME'
			works too.`),
		Example: templates.Examples(`
			# Templates of the current namespace and the jobs made from them
			kubectl vc jobtemplate list

			# One template, as vcctl names it
			kubectl vc jobtemplate get -N preprocess

			# Names only, for scripts
			kubectl vc jobtemplate list -A -o name`),
		ValidArgsFunction: Kind.Names(f),
		RunE:              util.RunE(o),
	}
	o.Options.AddFlags(cmd, list.Flags{AllNamespaces: "List job templates of every namespace", Selector: "Label selector, e.g. -l team=nlp", Watch: true})
	util.AddNameFlag(cmd, "job template", false, Kind.Flag(f))
	return cmd
}

// Run lists the templates, --chunk-size at a time, then optionally watches.
func (o *ListOptions) Run(ctx context.Context) error {
	c := o.Client.FlowV1alpha1().JobTemplates(o.Namespace)
	err := list.Run(ctx, &o.Options, list.Kind[flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplateList]{
		Name: "jobtemplate", Plural: "job templates", Get: c.Get, List: c.List, Watch: c.Watch,
		AsList: func(items []flowv1alpha1.JobTemplate, rv string) runtime.Object {
			return &flowv1alpha1.JobTemplateList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}
		},
		Table: func(items []flowv1alpha1.JobTemplate) runtime.Object { return Table(items, o.AllNamespaces) },
	})
	return APIError(err)
}

var columns = []vcprinters.Column{
	{Name: "NAME"}, {Name: "QUEUE"}, {Name: "MIN"}, {Name: "TASKS"}, {Name: "JOBS"}, {Name: "AGE"},
	{Name: "SCHEDULER", Wide: true},
}

// Table is the table of 'jobtemplate list'; allNamespaces adds NAMESPACE.
func Table(items []flowv1alpha1.JobTemplate, allNamespaces bool) *metav1.Table {
	cols := columns
	if allNamespaces {
		cols = append([]vcprinters.Column{{Name: "NAMESPACE"}}, columns...)
	}
	rows := make([][]any, 0, len(items))
	for i := range items {
		t := &items[i]
		var row []any
		if allNamespaces {
			row = append(row, t.Namespace)
		}
		row = append(row, t.Name, queueOf(t), t.Spec.MinAvailable, vcprinters.OrNone(job.Tasks(t.Spec.Tasks)),
			vcprinters.OrNone(strings.Join(t.Status.JobDependsOnList, ",")), vcprinters.Age(t.CreationTimestamp),
			vcprinters.OrNone(t.Spec.SchedulerName))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}

// queueOf is the template's queue; empty means default.
func queueOf(t *flowv1alpha1.JobTemplate) string {
	if t.Spec.Queue == "" {
		return keys.DefaultQueue
	}
	return t.Spec.Queue
}
