package command

import (
	"context"
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	list.Options
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{Options: list.NewOptions(f, streams)}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"get", "ls"},
		Short:   "List Commands not yet applied by a controller",
		Long: templates.LongDesc(`
			List Commands of a namespace (-n) or of all namespaces (-A), oldest first,
			with their action, target and age. Commands on Volcano Jobs (AbortJob,
			ResumeJob, RestartJob, TerminateJob) wait for Volcano's job controller, which
			'kubectl vc serve' does not run: a note on stderr names them.`),
		Example: templates.Examples(`
			# Every pending Command
			kubectl vc command list -A

			# As YAML, for a bug report
			kubectl vc command list -n default -o yaml

			# Watch Commands arrive (and change) in every namespace
			kubectl vc command list -A --watch

			# 100 Commands per list request (0: all in one request)
			kubectl vc command list -A --chunk-size 100`),
		Args: cobra.NoArgs,
		RunE: util.RunE(o),
	}
	o.AddFlags(cmd, list.Flags{AllNamespaces: "List Commands of every namespace", Selector: "Label selector", Watch: true})
	return cmd
}

// Validate checks the selector and the chunk size.
func (o *ListOptions) Validate() error {
	if err := o.Options.Validate(); err != nil {
		return err
	}
	return nil
}

// Run lists the Commands, --chunk-size at a time, then optionally watches
// from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	list := &busv1alpha1.CommandList{}
	var err error
	list.Items, list.ResourceVersion, err = chunk.List[busv1alpha1.Command](ctx, o.ChunkSize,
		metav1.ListOptions{LabelSelector: o.Selector}, o.Client.BusV1alpha1().Commands(o.Namespace).List)
	if err != nil {
		return err
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp)
	})
	if err := o.print(list.Items, list); err != nil {
		return err
	}
	if o.PrintFlags.HumanReadable() {
		noteJobCommands(o.ErrOut, list.Items)
	}
	if !o.Watch {
		return nil
	}
	return o.watch(ctx, list.ResourceVersion)
}

// watch prints every later change of the Commands, one row (or object)
// per change, until ctx ends.
func (o *ListOptions) watch(ctx context.Context, rv string) error {
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.Selector}, o.Client.BusV1alpha1().Commands(o.Namespace).Watch,
		func(t watch.EventType, cm *busv1alpha1.Command) error {
			if err := o.print([]busv1alpha1.Command{*cm}, cm); err != nil {
				return err
			}
			if t == watch.Added && o.PrintFlags.HumanReadable() {
				noteJobCommands(o.ErrOut, []busv1alpha1.Command{*cm})
			}
			return nil
		})
}

func (o *ListOptions) print(items []busv1alpha1.Command, obj runtime.Object) error {
	return o.Options.Print(obj, len(items), o.NoneFound("No pending commands"), func() runtime.Object {
		return commandTable(items, o.AllNamespaces)
	})
}

// commandTable is the table of 'command list'; allNamespaces adds NAMESPACE first.
func commandTable(items []busv1alpha1.Command, allNamespaces bool) *metav1.Table {
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
		row = append(row, cm.Name, cm.Action, target, vcprinters.Age(cm.CreationTimestamp),
			vcprinters.OrNone(cm.Reason), vcprinters.OrNone(cm.Message))
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}
