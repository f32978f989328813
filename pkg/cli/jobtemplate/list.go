package jobtemplate

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobspec"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// listHelp is the help of 'jobtemplate list'.
var listHelp = kind.Help{
	Short: "List job templates with the jobs made from them",
	Long: `
			List Volcano JobTemplates of a namespace (-n) or of all namespaces (-A): each
			template's queue, minAvailable and tasks (name=replicas), and the Volcano Jobs
			JobFlows made from it, as Volcano's jobtemplate controller records them in the
			template's status. -o wide adds the scheduler. vcctl's 'jobtemplate get -N NAME'
			works too.`,
	Example: `
			# Templates of the current namespace and the jobs made from them
			kubectl vc jobtemplate list

			# One template, as vcctl names it
			kubectl vc jobtemplate get -N preprocess

			# Names only, for scripts
			kubectl vc jobtemplate list -A -o name`,
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
		row = append(row, t.Name, queueOf(t), t.Spec.MinAvailable, vcprinters.OrNone(jobspec.Tasks(t.Spec.Tasks)),
			vcprinters.OrNone(strings.Join(t.Status.JobDependsOnList, ",")), vcprinters.Age(t.CreationTimestamp),
			vcprinters.OrNone(t.Spec.SchedulerName))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}

// queueOf is the template's queue (rules.QueueOf).
func queueOf(t *flowv1alpha1.JobTemplate) string { return rules.QueueOf(t.Spec.Queue) }
