package pod

import (
	"context"
	"fmt"
	"sort"

	"github.com/liggitt/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Commands returns the commands of the 'pod' group (its name, aliases
// and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newPodListCmd)
}

// PodListOptions holds the input of 'pod list'.
type PodListOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Job           string
	Queue         string
	AllNamespaces bool
	Selector      string
	ChunkSize     int64
	Watch         bool

	namespace string
	printer   printers.ResourcePrinter
	client    versioned.Interface
	kube      kubernetes.Interface
	tw        *tabwriter.Writer
}

func newPodListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &PodListOptions{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"get", "ls"},
		Short:   "List the pods of a job or a queue",
		Long: templates.LongDesc(`
			List the pods Volcano schedules in a namespace (-n) or in all (-A): those of
			Volcano Jobs (labelled volcano.sh/job-name) and those of other workloads that
			belong to a queue or a PodGroup. --job keeps the pods of one job; --queue keeps
			the pods of one queue, known by the queue label or annotation
			(volcano.sh/queue-name, scheduling.volcano.sh/queue-name) or else by the queue of
			the pod's PodGroup. One list of pods, and one of PodGroups only when a pod's queue
			is known by its PodGroup alone, each read --chunk-size objects at a time (500 by
			default; 0 reads each in one request).`),
		Example: templates.Examples(`
			# The pods of job train
			kubectl vc pod list --job train

			# Every pod of queue research, anywhere, with its PodGroup
			kubectl vc pod list -A --queue research -o wide`),
		Args: cobra.NoArgs,
		RunE: util.RunENoArgs(o),
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVar(&o.Job, "job", "", "Only the pods of this Volcano Job")
	cmd.Flags().StringVar(&o.Queue, "queue", "", "Only the pods of this queue")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List pods of every namespace")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector, e.g. -l app=train")
	chunk.AddFlag(cmd, &o.ChunkSize)
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	_ = cmd.RegisterFlagCompletionFunc("job", completion.Jobs.Flag(f))
	_ = cmd.RegisterFlagCompletionFunc("queue", completion.Queues.Flag(f))
	return cmd
}

// Complete resolves the namespace, the printer and the clients.
func (o *PodListOptions) Complete() error {
	var err error
	if o.namespace, err = util.ListNamespace(o.Factory, o.AllNamespaces); err != nil {
		return err
	}
	if o.printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.client, o.kube, err = util.Clients(o.Factory)
	return err
}

// Validate checks the filters.
func (o *PodListOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	if o.Job != "" {
		if err := util.ValidateObjectName("job", o.Job); err != nil {
			return util.UsageErrorf("invalid --job: %s", util.Message(err))
		}
		if o.AllNamespaces {
			return util.UsageErrorf("--job cannot be combined with --all-namespaces: job names are per namespace")
		}
	}
	if o.Queue != "" {
		if err := util.ValidateQueueFlag(o.Queue); err != nil {
			return err
		}
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	return nil
}

// Run lists the pods once and keeps Volcano's.
func (o *PodListOptions) Run(ctx context.Context) error {
	sel, _ := labels.Parse(o.Selector)
	if o.Job != "" {
		r, err := labels.NewRequirement(batchv1alpha1.JobNameLabel, selection.Equals, []string{o.Job})
		if err != nil {
			return util.UsageErrorf("invalid --job %q: %s", o.Job, util.Message(err))
		}
		sel = sel.Add(*r)
	}
	pods := &corev1.PodList{}
	var err error
	pods.Items, pods.ResourceVersion, err = chunk.List[corev1.Pod](ctx, o.ChunkSize,
		metav1.ListOptions{LabelSelector: sel.String()}, o.kube.CoreV1().Pods(o.namespace).List)
	if err != nil {
		return err
	}
	rows := podRows{o: o}
	var kept []podRow
	for i := range pods.Items {
		r, ok, err := rows.row(ctx, &pods.Items[i])
		if err != nil {
			return err
		}
		if ok {
			kept = append(kept, r)
		}
	}
	sort.Slice(kept, func(a, b int) bool {
		pa, pb := kept[a].pod, kept[b].pod
		if pa.Namespace != pb.Namespace {
			return pa.Namespace < pb.Namespace
		}
		return pa.Name < pb.Name
	})
	if err := o.print(kept, pods.ResourceVersion, false); err != nil || !o.Watch {
		return err
	}
	return follow.Each(ctx, pods.ResourceVersion, metav1.ListOptions{LabelSelector: sel.String()}, o.kube.CoreV1().Pods(o.namespace).Watch,
		func(_ watch.EventType, p *corev1.Pod) error {
			r, ok, err := rows.row(ctx, p)
			if err != nil || !ok {
				return err
			}
			return o.print([]podRow{r}, "", true)
		})
}

// print prints the rows as -o asks: a table, or the pods as a list at
// resourceVersion rv (a watched pod alone).
func (o *PodListOptions) print(rows []podRow, rv string, watched bool) error {
	if !o.PrintFlags.HumanReadable() {
		list := &corev1.PodList{}
		list.ResourceVersion = rv
		for _, r := range rows {
			list.Items = append(list.Items, *r.pod)
		}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		for i := range list.Items {
			list.Items[i].SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		}
		var obj runtime.Object = list
		if watched {
			obj = &list.Items[0]
		}
		return vcprinters.Print(o.printer, obj, o.Out)
	}
	if len(rows) == 0 {
		if o.Watch {
			return nil
		}
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No Volcano pods found.")
		} else {
			fmt.Fprintf(o.ErrOut, "No Volcano pods found in %s namespace.\n", o.namespace)
		}
		return nil
	}
	// One tab writer for the list and every watched row, as list.Options.
	if o.tw == nil {
		o.tw = printers.GetNewTabWriter(o.Out)
	}
	if err := o.printer.PrintObj(podTable(rows, o.AllNamespaces), o.tw); err != nil {
		return err
	}
	return o.tw.Flush()
}

// podRows decides, pod by pod, whether Volcano schedules it and with
// which queue, reading the PodGroups once, and only when a pod's queue is
// known by its PodGroup alone.
type podRows struct {
	o      *PodListOptions
	groups map[string]*schedulingv1beta1.PodGroup // namespace/name
}

func (rs *podRows) row(ctx context.Context, p *corev1.Pod) (podRow, bool, error) {
	group := p.Annotations[keys.KubeGroupName]
	q := queueKey(p)
	if q == "" && group != "" {
		pg := rs.groups[p.Namespace+"/"+group]
		if pg == nil {
			// Not read yet, or made after the first read (a watched pod).
			var err error
			if rs.groups, err = rs.o.podGroups(ctx); err != nil {
				return podRow{}, false, err
			}
			pg = rs.groups[p.Namespace+"/"+group]
		}
		if pg != nil {
			q = rules.QueueOf(pg.Spec.Queue)
		}
	}
	if p.Labels[batchv1alpha1.JobNameLabel] == "" && group == "" && q == "" {
		return podRow{}, false, nil // not a pod Volcano schedules
	}
	if rs.o.Queue != "" && q != rs.o.Queue {
		return podRow{}, false, nil
	}
	return podRow{pod: p, queue: q, group: group}, true, nil
}

func (o *PodListOptions) podGroups(ctx context.Context) (map[string]*schedulingv1beta1.PodGroup, error) {
	items, _, err := chunk.List[schedulingv1beta1.PodGroup](ctx, o.ChunkSize, metav1.ListOptions{},
		o.client.SchedulingV1beta1().PodGroups(o.namespace).List)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*schedulingv1beta1.PodGroup, len(items))
	for i := range items {
		pg := &items[i]
		out[pg.Namespace+"/"+pg.Name] = pg
	}
	return out, nil
}

// queueKey is the queue a pod names itself: the label Volcano's job
// controller sets, or one of the queue annotations other workloads carry.
func queueKey(p *corev1.Pod) string {
	return rules.PodQueue(p)
}

type podRow struct {
	pod          *corev1.Pod
	queue, group string
}

func podTable(rows []podRow, allNamespaces bool) *metav1.Table {
	var cols []vcprinters.Column
	if allNamespaces {
		cols = append(cols, vcprinters.Column{Name: "NAMESPACE"})
	}
	cols = append(cols, []vcprinters.Column{
		{Name: "NAME"}, {Name: "JOB"}, {Name: "TASK"}, {Name: "QUEUE"}, {Name: "PHASE"}, {Name: "NODE"}, {Name: "AGE"},
		{Name: "PODGROUP", Wide: true},
	}...)
	out := make([][]any, 0, len(rows))
	for _, r := range rows {
		p := r.pod
		var row []any
		if allNamespaces {
			row = append(row, p.Namespace)
		}
		row = append(row, p.Name, vcprinters.OrNone(p.Labels[batchv1alpha1.JobNameLabel]), vcprinters.OrNone(p.Labels[batchv1alpha1.TaskSpecLabel]),
			vcprinters.OrNone(r.queue), vcprinters.PodPhase(p), vcprinters.OrNone(p.Spec.NodeName), vcprinters.Age(p.CreationTimestamp),
			vcprinters.OrNone(r.group))
		out = append(out, row)
	}
	return vcprinters.Table(cols, out)
}
