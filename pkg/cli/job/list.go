package job

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// ListOptions holds the input of 'job list'.
type ListOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Names         []string
	AllNamespaces bool
	Queue         string
	Phase         string
	Selector      string
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
			kubectl vc job list -A --chunk-size 0`),
		ValidArgsFunction: jobNames(f, false),
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
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List jobs of every namespace")
	cmd.Flags().StringVar(&o.Queue, "queue", "", "Only jobs of this queue")
	cmd.Flags().StringVar(&o.Phase, "phase", "", "Only jobs in this phase: "+strings.Join(phaseNames(), ", "))
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector, e.g. -l team=nlp")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	_ = cmd.RegisterFlagCompletionFunc("queue", completion.FlagQueueNames(f))
	_ = cmd.RegisterFlagCompletionFunc("phase", phaseCompletion())
	return cmd
}

// Complete resolves the namespace, the printer and the client.
func (o *ListOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	if o.AllNamespaces {
		o.namespace = metav1.NamespaceAll
	}
	if o.printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks names and filters before any request.
func (o *ListOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	if o.AllNamespaces && len(o.Names) > 0 {
		return util.UsageErrorf("names cannot be combined with --all-namespaces: job names are per namespace")
	}
	if err := validateNames(o.Names); err != nil {
		return err
	}
	if len(o.Names) > 0 && o.Selector != "" {
		return util.UsageErrorf("give job names or --selector, not both")
	}
	if o.Queue != "" {
		if err := validateQueueFlag(o.Queue); err != nil {
			return err
		}
	}
	if o.Phase != "" && !knownPhase(o.Phase) {
		return util.UsageErrorf("unknown --phase %q: use one of %s", o.Phase, strings.Join(phaseNames(), ", "))
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	return nil
}

// keep applies the filters the API server cannot (spec and status fields
// of a custom resource are not selectable).
func (o *ListOptions) keep(j *batchv1alpha1.Job) bool {
	if o.Queue != "" && queueOf(j) != o.Queue {
		return false
	}
	if o.Phase != "" && string(phaseOf(j)) != o.Phase {
		return false
	}
	return true
}

// Run lists the jobs, --chunk-size at a time (named jobs are picked from
// the list, so that a missing one is reported by name), then optionally
// watches from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	jobs := o.client.BatchV1alpha1().Jobs(o.namespace)
	opts := metav1.ListOptions{LabelSelector: o.Selector}
	list := &batchv1alpha1.JobList{}
	var err error
	list.Items, list.ResourceVersion, err = chunk.Read[batchv1alpha1.Job](ctx, o.Names, o.Watch, o.ChunkSize, opts,
		jobs.Get, jobs.List, func(n string) error {
			return util.UsageErrorf("job %q not found in namespace %q", n, o.namespace)
		})
	if err != nil {
		return apiError(err)
	}
	kept := list.Items[:0]
	for i := range list.Items {
		if o.keep(&list.Items[i]) {
			kept = append(kept, list.Items[i])
		}
	}
	list.Items = kept
	if err := o.print(list.Items, list); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	return o.watch(ctx, list.ResourceVersion)
}

// watch prints every later change of the jobs that pass the filters.
func (o *ListOptions) watch(ctx context.Context, rv string) error {
	named := follow.Only(o.Names)
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.Selector}, o.client.BatchV1alpha1().Jobs(o.namespace).Watch,
		func(_ watch.EventType, j *batchv1alpha1.Job) error {
			if !named(j.Name) || !o.keep(j) {
				return nil
			}
			return o.print([]batchv1alpha1.Job{*j}, j)
		})
}

func (o *ListOptions) print(items []batchv1alpha1.Job, obj runtime.Object) error {
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, obj, o.Out)
	}
	if len(items) == 0 && !o.Watch {
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No jobs found.")
		} else {
			fmt.Fprintf(o.ErrOut, "No jobs found in %s namespace.\n", o.namespace)
		}
		return nil
	}
	return o.printer.PrintObj(jobTable(items, o.AllNamespaces), o.Out)
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
func tasksOf(j *batchv1alpha1.Job) string {
	parts := make([]string, 0, len(j.Spec.Tasks))
	for i, t := range j.Spec.Tasks {
		parts = append(parts, fmt.Sprintf("%s=%d", taskName(t, i), t.Replicas))
	}
	return strings.Join(parts, ",")
}

// taskName is the task's name, or the one Volcano gives an unnamed task.
func taskName(t batchv1alpha1.TaskSpec, index int) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("default%d", index)
}
