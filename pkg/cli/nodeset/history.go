package nodeset

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// HistoryOptions holds the input of 'nodeset history'.
type HistoryOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Name string

	namespace string
	printer   printers.ResourcePrinter
	vc        versioned.Interface
	kc        kubernetes.Interface
}

func newHistoryCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &HistoryOptions{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List the template revisions of a NodeSet",
		Long: templates.LongDesc(`
			List the ControllerRevisions of a NodeSet, oldest first, with how many pods
			run each. The current (update) revision is marked with "*". The controller
			keeps revisionHistoryLimit old revisions besides those pods still run.`),
		Example: templates.Examples(`
			kubectl vc nodeset history compute`),
		Args:              util.NameArgs("NodeSet", 1, 1, "nodeset history compute"),
		ValidArgsFunction: Kind.NameArg(f),
		RunE:              util.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

// Complete records the name and resolves the namespace, the printer and
// the clients.
func (o *HistoryOptions) Complete(args []string) error {
	o.Name = args[0]
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	if o.printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.vc, o.kc, err = util.Clients(o.Factory)
	return err
}

// Validate checks the name.
func (o *HistoryOptions) Validate() error { return validateName("NodeSet", o.Name) }

// Run prints the revisions.
func (o *HistoryOptions) Run(ctx context.Context) error {
	ns, err := o.vc.SlinkyV1beta1().NodeSets(o.namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return util.InNamespace(err, o.namespace)
	}
	// By owner, not by label: Slinky's operator labels its revisions with
	// the template's labels only.
	list, err := o.kc.AppsV1().ControllerRevisions(o.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	owned := list.DeepCopy()
	owned.Items = owned.Items[:0]
	for _, r := range list.Items {
		if metav1.IsControlledBy(&r, ns) {
			owned.Items = append(owned.Items, r)
		}
	}
	sort.Slice(owned.Items, func(i, j int) bool { return owned.Items[i].Revision < owned.Items[j].Revision })
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.printer, owned, o.Out)
	}
	if len(owned.Items) == 0 {
		fmt.Fprintln(o.ErrOut, "No revisions found.")
		return nil
	}
	pods, err := nodeSetPods(ctx, o.kc, ns)
	if err != nil {
		return err
	}
	running := map[string]int{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			running[slinkyv1beta1.PodRevisionHash(ns.Name, p.Labels)]++
		}
	}
	var rows [][]any
	for _, r := range owned.Items {
		hash, mark := slinkyv1beta1.RevisionHash(ns.Name, r.Name, r.Labels), ""
		if hash == ns.Status.NodeSetHash {
			mark = "*"
		}
		rows = append(rows, []any{r.Revision, r.Name + mark, running[hash], vcprinters.Age(r.CreationTimestamp)})
	}
	cols := []vcprinters.Column{{Name: "REVISION"}, {Name: "NAME"}, {Name: "PODS"}, {Name: "AGE"}}
	return o.printer.PrintObj(vcprinters.Table(cols, rows), o.Out)
}
