package command

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

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
			kubectl vc command list -n default -o yaml`),
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

// Validate checks the selector.
func (o *ListOptions) Validate() error {
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	return nil
}

// Run lists the Commands.
func (o *ListOptions) Run(ctx context.Context) error {
	list, err := o.client.BusV1alpha1().Commands(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if err != nil {
		return err
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		return list.Items[i].CreationTimestamp.Before(&list.Items[j].CreationTimestamp)
	})
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, list, o.Out)
	}
	if len(list.Items) == 0 {
		if o.AllNamespaces {
			fmt.Fprintln(o.ErrOut, "No pending commands.")
		} else {
			fmt.Fprintf(o.ErrOut, "No pending commands in %s namespace.\n", o.Namespace)
		}
		return nil
	}
	var cols []vcprinters.Column
	if o.AllNamespaces {
		cols = append(cols, vcprinters.Column{Name: "NAMESPACE"})
	}
	cols = append(cols, vcprinters.Column{Name: "NAME"}, vcprinters.Column{Name: "ACTION"}, vcprinters.Column{Name: "TARGET"},
		vcprinters.Column{Name: "AGE"}, vcprinters.Column{Name: "REASON", Wide: true}, vcprinters.Column{Name: "MESSAGE", Wide: true})
	rows := make([][]any, 0, len(list.Items))
	for i := range list.Items {
		cm := &list.Items[i]
		target := "<none>"
		if t := cm.TargetObject; t != nil {
			target = t.Kind + "/" + t.Name
		}
		var row []any
		if o.AllNamespaces {
			row = append(row, cm.Namespace)
		}
		row = append(row, cm.Name, cm.Action, target, vcprinters.Age(cm.CreationTimestamp),
			vcprinters.OrNone(cm.Reason), vcprinters.OrNone(cm.Message))
		rows = append(rows, row)
	}
	if err := o.printer.PrintObj(vcprinters.Table(cols, rows), o.Out); err != nil {
		return err
	}
	noteJobCommands(o.ErrOut, list.Items)
	return nil
}
