package jobflow

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// describeHelp is the help of 'jobflow describe'.
var describeHelp = kind.Help{
	Short: "Draw a job flow: its steps, what each waits for, and their jobs",
	Long: `
			Show a JobFlow as the dependency graph of its steps: each step (the JobTemplate
			of its name) drawn under the step it waits for last, with the other steps it
			depends on, the Volcano Job made for it (<flow>-<step>) and that job's phase;
			a step with no job yet is Waiting, with why (the steps it waits for and their
			phases, a missing JobTemplate, or no jobflow controller). Then each step's
			details, the flow's status as Volcano's jobflow controller recorded it, and
			its events. The jobs' phases are read from the jobs themselves (labelled
			volcano.sh/createdByJobFlow); if they cannot be listed, from the flow's status.`,
	Example: `
			kubectl vc jobflow describe pipeline -n research

			# As vcctl names it
			kubectl vc jobflow describe -N pipeline`,
}

// describeFlow writes a flow's retain policy and phase, its steps drawn as a
// graph and as a table, and its status. Only the flow itself must be
// readable: its jobs' phases come from the jobs when they can be listed,
// else from the flow's status.
func describeFlow(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, jf *flowv1alpha1.JobFlow) {
	retain := string(jf.Spec.JobRetainPolicy)
	if retain == "" {
		retain = string(flowv1alpha1.Retain)
	}
	d.Line(0, "Job Retain Policy", retain)
	d.Line(0, "Phase", string(phaseOf(jf)))

	in := Input{Flow: jf, Jobs: recorded(jf)}
	source := ""
	sel := flowv1alpha1.CreatedByJobFlowKey + "=" + flowv1alpha1.ObjectString(jf.Namespace, jf.Name)
	if jobs, err := o.Client.BatchV1alpha1().Jobs(jf.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel}); err == nil {
		in.Jobs = map[string]batchv1alpha1.JobPhase{}
		for _, j := range jobs.Items {
			in.Jobs[j.Name] = j.Status.State.Phase
		}
	} else {
		source = " (jobs from the flow's status: cannot list jobs: " + util.Message(err) + ")"
	}
	if ts, err := o.Client.FlowV1alpha1().JobTemplates(jf.Namespace).List(ctx, metav1.ListOptions{}); err == nil {
		in.Templates = map[string]bool{}
		for _, t := range ts.Items {
			in.Templates[t.Name] = true
		}
	}
	steps := Steps(in)
	c := Count(steps)
	d.Line(0, "Steps", fmt.Sprintf("%d: %d done, %d running, %d failed, %d waiting%s", c.Steps, c.Done, c.Running, c.Failed, c.Waiting, source))
	d.Table(0, "Flow", "", Draw(steps))
	d.Table(0, "Step Details", "Step\tDepends On\tJob\tPhase\tWaiting For", stepRows(steps))
	writeStatus(d, jf)
}

// stepRows are the table of steps: one row per step, in graph order.
func stepRows(steps []Step) []string {
	rows := make([]string, 0, len(steps))
	for _, s := range steps {
		job, phase, waiting := s.Job, string(s.Phase), ""
		if s.State == Waiting {
			job, phase, waiting = "<none>", "<none>", s.Why
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", s.Name, vcprinters.OrNone(someOf(s.DependsOn, ",")), job, phase, vcprinters.OrNone(waiting)))
	}
	return rows
}

// writeStatus writes the flow's status as the controller recorded it:
// each job with its phase, start, end and restarts.
func writeStatus(d *vcprinters.Describer, jf *flowv1alpha1.JobFlow) {
	list := append([]flowv1alpha1.JobStatus{}, jf.Status.JobStatusList...)
	sort.SliceStable(list, func(i, k int) bool { return list[i].StartTimestamp.Before(&list[k].StartTimestamp) })
	var rows []string
	for _, s := range list {
		end := "<none>"
		if !s.EndTimestamp.IsZero() {
			end = s.EndTimestamp.Format("2006-01-02T15:04:05Z07:00")
		}
		start := "<none>"
		if !s.StartTimestamp.IsZero() {
			start = s.StartTimestamp.Format("2006-01-02T15:04:05Z07:00")
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%d", s.Name, vcprinters.OrNone(string(s.State)), start, end, s.RestartCount))
	}
	d.Table(0, "Status", "Job\tState\tStarted\tEnded\tRestarts", rows)
}
