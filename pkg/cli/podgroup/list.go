package podgroup

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

var phases = []schedulingv1beta1.PodGroupPhase{
	schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupUnknown,
	schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupCompleted,
}

// ListOptions holds the input of 'podgroup list'.
type ListOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Names         []string
	Namespace     string
	AllNamespaces bool
	Queue         string
	Phase         string
	Selector      string
	Watch         bool
	ChunkSize     int64

	printer printers.ResourcePrinter
	client  versioned.Interface
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
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
		ValidArgsFunction: completion.PodGroupNames(f),
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
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List podgroups of every namespace")
	cmd.Flags().StringVar(&o.Queue, "queue", "", "Only podgroups of this queue")
	cmd.Flags().StringVar(&o.Phase, "phase", "", "Only podgroups in this phase: Pending, Running, Unknown, Inqueue or Completed")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector, e.g. -l app=train")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	_ = cmd.RegisterFlagCompletionFunc("queue", completion.FlagQueueNames(f))
	_ = cmd.RegisterFlagCompletionFunc("phase", cobra.FixedCompletions([]string{"Pending", "Running", "Unknown", "Inqueue", "Completed"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete resolves the namespace, the printer and the client.
func (o *ListOptions) Complete(args []string) error {
	o.Names = args
	ns, _, err := o.Factory.Namespace()
	if err != nil {
		return util.UsageErrorf("cannot read the namespace from the kubeconfig: %s", util.Message(err))
	}
	o.Namespace = ns
	if o.AllNamespaces {
		o.Namespace = metav1.NamespaceAll
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
		return util.UsageErrorf("names cannot be combined with --all-namespaces: podgroup names are per namespace")
	}
	if len(o.Names) > 0 && o.Selector != "" {
		return util.UsageErrorf("give podgroup names or --selector, not both")
	}
	for _, n := range o.Names {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			return util.UsageErrorf("invalid podgroup name %q: %s", n, errs[0])
		}
	}
	if o.Queue != "" {
		if errs := validation.IsDNS1123Subdomain(o.Queue); len(errs) > 0 {
			return util.UsageErrorf("invalid --queue %q: %s", o.Queue, errs[0])
		}
	}
	if o.Phase != "" && !knownPhase(o.Phase) {
		return util.UsageErrorf("unknown --phase %q: use Pending, Running, Unknown, Inqueue or Completed", o.Phase)
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	return nil
}

func knownPhase(p string) bool {
	for _, k := range phases {
		if string(k) == p {
			return true
		}
	}
	return false
}

func (o *ListOptions) keep(pg *schedulingv1beta1.PodGroup) bool {
	if o.Queue != "" && queueOf(pg) != o.Queue {
		return false
	}
	if o.Phase != "" && phaseOf(pg) != o.Phase {
		return false
	}
	return true
}

// Run lists podgroups once (filters on queue and phase are applied here:
// the API server cannot select custom resources by spec fields).
func (o *ListOptions) Run(ctx context.Context) error {
	pgs := o.client.SchedulingV1beta1().PodGroups(o.Namespace)
	opts := metav1.ListOptions{LabelSelector: o.Selector}
	list := &schedulingv1beta1.PodGroupList{}
	var err error
	list.Items, list.ResourceVersion, err = chunk.Read[schedulingv1beta1.PodGroup](ctx, o.Names, o.Watch, o.ChunkSize, opts,
		pgs.Get, pgs.List, func(n string) error {
			return util.UsageErrorf("podgroup %q not found in namespace %q", n, o.Namespace)
		})
	if err != nil {
		return err
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
	named := follow.Only(o.Names)
	return follow.Each(ctx, list.ResourceVersion, opts, pgs.Watch,
		func(_ watch.EventType, pg *schedulingv1beta1.PodGroup) error {
			if !named(pg.Name) || !o.keep(pg) {
				return nil
			}
			return o.print([]schedulingv1beta1.PodGroup{*pg}, pg)
		})
}

func (o *ListOptions) print(items []schedulingv1beta1.PodGroup, obj runtime.Object) error {
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, obj, o.Out)
	}
	if len(items) == 0 && !o.Watch {
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No podgroups found.")
		} else {
			fmt.Fprintf(o.ErrOut, "No podgroups found in %s namespace.\n", o.Namespace)
		}
		return nil
	}
	cols := []vcprinters.Column{}
	if o.AllNamespaces {
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
		if o.AllNamespaces {
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
	return o.printer.PrintObj(vcprinters.Table(cols, rows), o.Out)
}

// queueOf returns the queue a podgroup is scheduled from; empty means default.
func queueOf(pg *schedulingv1beta1.PodGroup) string {
	if pg.Spec.Queue == "" {
		return "default"
	}
	return pg.Spec.Queue
}

// phaseOf returns the phase; a podgroup the scheduler has not seen yet is Pending.
func phaseOf(pg *schedulingv1beta1.PodGroup) string {
	if pg.Status.Phase == "" {
		return string(schedulingv1beta1.PodGroupPending)
	}
	return string(pg.Status.Phase)
}
