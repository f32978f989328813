package jobflow

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
)

// listHelp is the help of 'jobflow list'.
var listHelp = kind.Help{
	Short: "List job flows with how far their steps got",
	Long: `
			List Volcano JobFlows of a namespace (-n) or of all namespaces (-A): each flow's
			phase and its steps by progress: DONE (the step's job Completed), RUNNING (its
			job exists and has not finished), FAILED (its job Failed, was Terminated or
			Aborted) and WAITING (no job made yet), as Volcano's jobflow controller records
			them in the flow's status. -o wide adds the steps in order and the retain
			policy; 'jobflow describe' draws the steps with why each waits. vcctl's
			'jobflow get -N NAME' works too.`,
	Example: `
			# Flows of the current namespace and their progress
			kubectl vc jobflow list

			# Follow a flow as its steps run
			kubectl vc jobflow get pipeline --watch

			# Names only, for scripts
			kubectl vc jobflow list -A -o name`,
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
