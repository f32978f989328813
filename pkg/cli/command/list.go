package command

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// ListOptions holds the input of 'command list'.
type ListOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Namespace     string
	AllNamespaces bool
	Selector      string
	Watch         bool
	ChunkSize     int64

	printer printers.ResourcePrinter
	client  versioned.Interface
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List Commands of every namespace")
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", "Label selector")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// Complete resolves the namespace, the printer and the client.
func (o *ListOptions) Complete() error {
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

// Validate checks the selector and the chunk size.
func (o *ListOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	return nil
}

// Run lists the Commands, --chunk-size at a time, then optionally watches
// from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	list := &busv1alpha1.CommandList{}
	var err error
	list.Items, list.ResourceVersion, err = chunk.List[busv1alpha1.Command](ctx, o.ChunkSize,
		metav1.ListOptions{LabelSelector: o.Selector}, o.client.BusV1alpha1().Commands(o.Namespace).List)
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
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.Selector}, o.client.BusV1alpha1().Commands(o.Namespace).Watch,
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
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, obj, o.Out)
	}
	if len(items) == 0 {
		if o.Watch {
			return nil
		}
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No pending commands.")
		} else {
			fmt.Fprintf(o.ErrOut, "No pending commands in %s namespace.\n", o.Namespace)
		}
		return nil
	}
	return o.printer.PrintObj(commandTable(items, o.AllNamespaces), o.Out)
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
