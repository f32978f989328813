package job

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobspec"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// ListOptions holds the input of 'job list'.
type ListOptions struct {
	List list.Options
	list.QueuePhase
	// Flow keeps the jobs Volcano's jobflow controller made for the
	// JobFlow of that name (labelled volcano.sh/createdByJobFlow).
	Flow string
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{List: list.NewOptions(f, streams).Named("job", ValidateName)}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List jobs with their phases and pod counts",
		Long: templates.LongDesc(`
			List Volcano Jobs of a namespace (-n) or of all namespaces (-A), optionally only
			those of one queue or phase, with the pod counts the job controller keeps in each
			job's status. Jobs are listed --chunk-size at a time (500 by default; 0 lists
			them in one request). -o wide adds each job's tasks (name=replicas) and scheduler.`),
		Example: templates.Examples(`
			# Jobs of the current namespace
			kubectl vc job list

			# Suspended jobs of queue research, anywhere
			kubectl vc job list -A --queue research --phase Aborted

			# Two jobs with their tasks and scheduler
			kubectl vc job get train eval -o wide

			# Names only, for scripts
			kubectl vc job list -l team=nlp -o name

			# Every job of every namespace in one list request
			kubectl vc job list -A --chunk-size 0

			# The jobs made for the steps of JobFlow pipeline
			kubectl vc job list --flow pipeline`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.List.AddFlags(cmd, list.Flags{AllNamespaces: "List jobs of every namespace", Selector: "Label selector, e.g. -l team=nlp", Watch: true})
	o.QueuePhase.AddFlags(cmd, completion.Queues.Flag(f), "jobs", util.Names(phases))
	cmd.Flags().StringVar(&o.Flow, "flow", "", "Only the jobs made for the steps of this JobFlow (by Volcano's jobflow controller)")
	_ = cmd.RegisterFlagCompletionFunc("flow", completion.JobFlows.Flag(f))
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
	if o.Flow != "" {
		if errs := validation.IsDNS1123Subdomain(o.Flow); len(errs) > 0 {
			return util.UsageErrorf("invalid --flow %q: %s", o.Flow, errs[0])
		}
	}
	return o.QueuePhase.Validate(util.Names(phases))
}

// keep applies the filters the API server cannot (spec and status fields
// of a custom resource are not selectable).
func (o *ListOptions) keep(j *batchv1alpha1.Job) bool {
	if o.Flow != "" && flowv1alpha1.CreatedBy(j, flowv1alpha1.CreatedByJobFlowKey) != o.Flow {
		return false
	}
	return o.Keeps(queueOf(j), string(phaseOf(j)))
}

// Run lists the jobs, --chunk-size at a time (named jobs are picked from
// the list, so that a missing one is reported by name), then optionally
// watches from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	if o.Flow != "" && !o.List.AllNamespaces && len(o.List.Names) == 0 {
		// In one namespace the label names the flow exactly: let the
		// server select (keep checks again, and across namespaces).
		sel := flowv1alpha1.CreatedByJobFlowKey + "=" + flowv1alpha1.ObjectString(o.List.Namespace, o.Flow)
		if o.List.Selector != "" {
			sel = o.List.Selector + "," + sel
		}
		o.List.Selector = sel
	}
	err := list.Run(ctx, &o.List, Kind, list.Rows[batchv1alpha1.Job, *batchv1alpha1.Job]{
		Keep:   o.keep,
		Stream: true, // the table of a page is that page's alone
	})
	return Kind.APIError(err)
}

var jobColumns = []vcprinters.Column{
	{Name: "NAME"}, {Name: "QUEUE"}, {Name: "PHASE"}, {Name: "MIN"},
	{Name: "PENDING"}, {Name: "RUNNING"}, {Name: "SUCCEEDED"}, {Name: "FAILED"}, {Name: "RETRIES"},
	{Name: "AGE"},
	{Name: "TASKS", Wide: true}, {Name: "SCHEDULER", Wide: true},
}

// jobTable is the table of 'job list'; allNamespaces adds NAMESPACE first.
func jobTable(items []batchv1alpha1.Job, allNamespaces bool) *metav1.Table {
	cols := jobColumns
	if allNamespaces {
		cols = append([]vcprinters.Column{{Name: "NAMESPACE"}}, jobColumns...)
	}
	rows := make([][]any, 0, len(items))
	for i := range items {
		j := &items[i]
		var row []any
		if allNamespaces {
			row = append(row, j.Namespace)
		}
		s := j.Status
		row = append(row, j.Name, queueOf(j), string(phaseOf(j)), minAvailable(j),
			s.Pending, s.Running, s.Succeeded, s.Failed, s.RetryCount,
			vcprinters.Age(j.CreationTimestamp), vcprinters.OrNone(tasksOf(j)), vcprinters.OrNone(j.Spec.SchedulerName))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}

// tasksOf lists the tasks as name=replicas, in spec order.
func tasksOf(j *batchv1alpha1.Job) string { return jobspec.Tasks(j.Spec.Tasks) }
