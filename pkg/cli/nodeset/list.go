package nodeset

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// ListOptions holds the input of 'nodeset list'.
type ListOptions struct {
	List list.Options
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{List: list.NewOptions(f, streams).Named("NodeSet", func(n string) error { return validateName("NodeSet", n) })}
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List NodeSets with pod and Slurm node counts",
		Long: templates.LongDesc(`
			List NodeSets: desired, current, ready and updated pods, and how many of
			their Slurm nodes are idle, allocated, drained (or draining) and down, as the
			NodeSet controller last recorded in status.`),
		Example: templates.Examples(`
			# NodeSets of the current namespace
			kubectl vc nodeset list

			# Every namespace, as YAML
			kubectl vc nodeset list -A -o yaml

			# Watch two NodeSets scale and drain
			kubectl vc nodeset list slurm-a slurm-b --watch

			# 100 NodeSets per list request (0: all in one request)
			kubectl vc nodeset list -A --chunk-size 100`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.List.AddFlags(cmd, list.Flags{AllNamespaces: "List NodeSets of every namespace", Selector: "Label selector", Watch: true})
	return cmd
}

// Complete records the names and resolves the namespace, the printer and
// the client, as every list does (list.Options).
func (o *ListOptions) Complete(args []string) error { return o.List.Complete(args) }

// Validate checks --chunk-size and --selector, as every list does.
func (o *ListOptions) Validate() error { return o.List.Validate() }

// Run lists the NodeSets (named ones by name; all of them --chunk-size at
// a time), then optionally watches from the list's resourceVersion.
func (o *ListOptions) Run(ctx context.Context) error {
	return list.Run(ctx, &o.List, Kind, list.Rows[slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSet]{
		Stream: true, // the table of a page is that page's alone (status counts)
	})
}

func nodeSetTable(items []slinkyv1beta1.NodeSet, withNamespace bool) *metav1.Table {
	cols := []vcprinters.Column{{Name: "NAME"}, {Name: "DESIRED"}, {Name: "CURRENT"}, {Name: "READY"}, {Name: "UPDATED"},
		{Name: "IDLE"}, {Name: "ALLOC"}, {Name: "DRAIN"}, {Name: "DOWN"}, {Name: "AGE"}, {Name: "HASH", Wide: true}}
	if withNamespace {
		cols = append([]vcprinters.Column{{Name: "NAMESPACE"}}, cols...)
	}
	var rows [][]any
	for _, ns := range items {
		st := ns.Status
		row := []any{ns.Name, desiredPods(&ns), st.Replicas, st.ReadyReplicas, st.UpdatedReplicas,
			st.SlurmIdle, st.SlurmAllocated, st.SlurmDrain, st.SlurmDown, vcprinters.Age(ns.CreationTimestamp), vcprinters.OrNone(st.NodeSetHash)}
		if withNamespace {
			row = append([]any{ns.Namespace}, row...)
		}
		rows = append(rows, row)
	}
	return vcprinters.Table(cols, rows)
}
