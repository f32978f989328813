package command

import (
	"context"
	"sort"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// ListOptions holds the input of 'command list'.
type ListOptions struct {
	List list.Options
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{List: list.NewOptions(f, streams)}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"get", "ls"},
		Short:   "List Commands not yet applied by a controller",
		Long: templates.LongDesc(`
			List Commands of a namespace (-n) or of all namespaces (-A), oldest first,
			with their action, target and age. Commands on Volcano Jobs (AbortJob,
			ResumeJob, RestartJob, TerminateJob) wait for Volcano's job controller, which
			'kubectl vc serve' does not run: a note on stderr names them.

			With -o wide, REASON and MESSAGE say why a Command waits: its own reason and
			message when its writer set them, otherwise the last Warning event a
			controller recorded on it (e.g. WaitingForParent: an OpenQueue Command whose
			queue's parent is Closed).`),
		Example: templates.Examples(`
			# Every pending Command
			kubectl vc command list -A

			# Why each one waits
			kubectl vc command list -A -o wide

			# As YAML, for a bug report
			kubectl vc command list -n default -o yaml

			# Watch Commands arrive (and change) in every namespace
			kubectl vc command list -A --watch

			# 100 Commands per list request (0: all in one request)
			kubectl vc command list -A --chunk-size 100`),
		Args: cobra.NoArgs,
		RunE: util.RunE(o),
	}
	o.List.AddFlags(cmd, list.Flags{AllNamespaces: "List Commands of every namespace", Selector: "Label selector", Watch: true})
	return cmd
}

// Complete records the names and resolves the namespace, the printer and
// the client, as every list does (list.Options).
func (o *ListOptions) Complete(args []string) error { return o.List.Complete(args) }

// Validate checks --chunk-size and --selector, as every list does.
func (o *ListOptions) Validate() error { return o.List.Validate() }

// Run lists the Commands, --chunk-size at a time, then optionally watches
// from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	list := &busv1alpha1.CommandList{}
	var err error
	list.Items, list.ResourceVersion, err = chunk.List[busv1alpha1.Command](ctx, o.List.ChunkSize,
		metav1.ListOptions{LabelSelector: o.List.Selector}, o.List.Client.BusV1alpha1().Commands(o.List.Namespace).List)
	if err != nil {
		return err
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp)
	})
	if err := o.print(ctx, list.Items, list); err != nil {
		return err
	}
	if o.List.PrintFlags.HumanReadable() {
		noteJobCommands(o.List.ErrOut, list.Items)
	}
	if !o.List.Watch {
		return nil
	}
	return o.watch(ctx, list.ResourceVersion)
}

// watch prints every later change of the Commands, one row (or object)
// per change, until ctx ends.
func (o *ListOptions) watch(ctx context.Context, rv string) error {
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.List.Selector}, o.List.Client.BusV1alpha1().Commands(o.List.Namespace).Watch,
		func(t watch.EventType, cm *busv1alpha1.Command) error {
			if err := o.print(ctx, []busv1alpha1.Command{*cm}, cm); err != nil {
				return err
			}
			if t == watch.Added && o.List.PrintFlags.HumanReadable() {
				noteJobCommands(o.List.ErrOut, []busv1alpha1.Command{*cm})
			}
			return nil
		})
}

func (o *ListOptions) print(ctx context.Context, items []busv1alpha1.Command, obj runtime.Object) error {
	return o.List.Print(obj, len(items), o.List.NoneFound("No pending commands"), func() runtime.Object {
		return commandTable(items, o.List.AllNamespaces, o.warnings(ctx, items))
	})
}

// warnings reads, for -o wide only, the last Warning event of each listed
// Command: why a controller has not applied it. A user who may not read
// events gets the table without them.
func (o *ListOptions) warnings(ctx context.Context, items []busv1alpha1.Command) map[types.UID]corev1.Event {
	if o.List.PrintFlags.Format() != "wide" || len(items) == 0 {
		return nil
	}
	kc, err := o.List.Factory.KubeClient()
	if err != nil {
		return nil
	}
	q := vcprinters.EventQuery{APIVersion: busv1alpha1.SchemeGroupVersion.String(), Kind: "Command", Namespace: o.List.Namespace}
	if len(items) == 1 {
		q.Name, q.Namespace = items[0].Name, items[0].Namespace
	}
	evs, err := vcprinters.LatestWarnings(ctx, kc, q)
	if err != nil {
		return nil
	}
	return evs
}

// commandTable is the table of 'command list'; allNamespaces adds NAMESPACE
// first. REASON and MESSAGE are the Command's own, or else those of the last
// Warning event on it (warnings, by UID).
func commandTable(items []busv1alpha1.Command, allNamespaces bool, warnings map[types.UID]corev1.Event) *metav1.Table {
	var cols []vcprinters.Column
	if allNamespaces {
		cols = append(cols, vcprinters.Column{Name: "NAMESPACE"})
	}
	cols = append(cols, vcprinters.Column{Name: "NAME"}, vcprinters.Column{Name: "ACTION"}, vcprinters.Column{Name: "TARGET"},
		vcprinters.Column{Name: "AGE"}, vcprinters.Column{Name: "REASON", Wide: true}, vcprinters.Column{Name: "MESSAGE", Wide: true})
	rows := make([][]any, 0, len(items))
	for i := range items {
		cm := &items[i]
		target := "<none>"
		if t := cm.TargetObject; t != nil {
			target = t.Kind + "/" + t.Name
		}
		var row []any
		if allNamespaces {
			row = append(row, cm.Namespace)
		}
		reason, message := cm.Reason, cm.Message
		if ev, ok := warnings[cm.UID]; ok && reason == "" && message == "" {
			reason, message = ev.Reason, ev.Message
		}
		row = append(row, cm.Name, cm.Action, target, vcprinters.Age(cm.CreationTimestamp),
			vcprinters.OrNone(reason), vcprinters.OrNone(message))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}
