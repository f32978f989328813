package hypernode

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/topology"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	rules "github.com/kubectl-vc/kubectl-vc/pkg/rules/topology"
)

// ListOptions holds the input of 'hypernode list'.
type ListOptions struct {
	List list.Options

	// world is read once, with the list, for the table.
	world *topology.World
}

func newListCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ListOptions{List: list.NewOptions(f, streams).Named("hypernode", validateName)}
	o.List.ClusterScoped = true
	cmd := &cobra.Command{
		Use:     "list [NAME...]",
		Aliases: []string{"get", "ls"},
		Short:   "List HyperNodes with their nodes and resources",
		Long: templates.LongDesc(`
			List HyperNodes: tier, tier name, parent (the HyperNode that lists it as a
			member), the nodes its members resolve to (exact names, regular expressions and
			node labels matched against the real nodes, through its HyperNode members too),
			the idle and allocatable resources of those nodes (idle: allocatable less the
			requests of the pods bound there that have not finished, as Volcano's scheduler
			counts it), and its age. -o wide adds its members and its defects.

			Nodes and pods are read once: a user who may not list nodes sees the HyperNodes
			without nodes or resources, and is told so on stderr. With --watch the rows of
			later changes resolve members against the nodes read at the start.`),
		Example: templates.Examples(`
			# Every HyperNode
			kubectl vc hypernode list

			# With members and defects
			kubectl vc hn get -o wide

			# Names only, for scripts
			kubectl vc hn list -o name

			# Watch HyperNodes change
			kubectl vc hn list --watch`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.List.AddFlags(cmd, list.Flags{Selector: "Label selector, e.g. -l tier=rack", Watch: true})
	return cmd
}

// Complete records the names and resolves the printer and the client.
func (o *ListOptions) Complete(args []string) error { return o.List.Complete(args) }

// Validate checks names, --chunk-size and --selector.
func (o *ListOptions) Validate() error { return o.List.Validate() }

// Run lists HyperNodes (and with --watch their changes); for a table it
// first reads nodes and pods, once.
func (o *ListOptions) Run(ctx context.Context) error {
	if o.List.PrintFlags.HumanReadable() {
		if err := o.read(ctx); err != nil {
			return Kind.APIError(err)
		}
	}
	err := list.Run(ctx, &o.List, Kind, list.Rows[topologyv1alpha1.HyperNode, *topologyv1alpha1.HyperNode]{
		Table: func(items []topologyv1alpha1.HyperNode) runtime.Object {
			// The list is read after the world: what changed between the
			// two is taken as listed.
			o.world.Merge(items)
			return hyperNodeTable(items, o.world)
		},
		WatchTable: func(h *topologyv1alpha1.HyperNode) runtime.Object {
			o.world.Replace(*h)
			return hyperNodeTable([]topologyv1alpha1.HyperNode{*h}, o.world)
		},
	})
	return Kind.APIError(err)
}

// read reads the world and says on stderr what it could not read.
func (o *ListOptions) read(ctx context.Context) error {
	kube, err := o.List.Factory.KubeClient()
	if err != nil {
		return err
	}
	r := &topology.Reader{VC: o.List.Client, Kube: kube, ChunkSize: o.List.ChunkSize, Pods: true}
	if o.world, err = r.Read(ctx); err != nil {
		return err
	}
	for _, u := range o.world.Unreadable {
		fmt.Fprintln(o.List.ErrOut, "Warning: "+u)
	}
	return nil
}

var columns = []vcprinters.Column{
	{Name: "NAME"}, {Name: "TIER"}, {Name: "TIERNAME"}, {Name: "PARENT"}, {Name: "NODES"},
	{Name: "IDLE"}, {Name: "ALLOCATABLE"}, {Name: "AGE"},
	{Name: "MEMBERS", Wide: true}, {Name: "DEFECTS", Wide: true},
}

// hyperNodeTable is the table of items, resolved in w's tree.
func hyperNodeTable(items []topologyv1alpha1.HyperNode, w *topology.World) *metav1.Table {
	rows := make([][]any, 0, len(items))
	for i := range items {
		h := &items[i]
		n := w.Tree.Get(h.Name)
		nodes, parent, members, defects := "<unknown>", "<none>", "", ""
		idle, alloc := "<unknown>", "<unknown>"
		if n != nil {
			parent = vcprinters.OrNone(strings.Join(n.Parents, ","))
			if w.Tree.NodesRead {
				nodes = nodeList(n.Nodes)
				a, id := w.Usage.Of(n.Nodes)
				alloc = vcprinters.OrNone(vcprinters.Resources(a))
				if w.Usage.PodsRead {
					idle = vcprinters.OrNone(vcprinters.Resources(id))
				}
			}
			members = memberWords(n)
			var ds []string
			for _, d := range w.Tree.DefectsOf(h.Name) {
				ds = append(ds, string(d.Kind))
			}
			defects = strings.Join(ds, ",")
		}
		rows = append(rows, []any{h.Name, h.Spec.Tier, vcprinters.OrNone(h.Spec.TierName), parent, nodes,
			idle, alloc, vcprinters.Age(h.CreationTimestamp), vcprinters.OrNone(members), vcprinters.OrNone(defects)})
	}
	return vcprinters.Table(columns, rows)
}

// nodeList shows up to 5 node names, then how many more.
func nodeList(nodes []string) string {
	if len(nodes) == 0 {
		return "<none>"
	}
	if len(nodes) <= 5 {
		return strings.Join(nodes, ",")
	}
	return fmt.Sprintf("%s,+%d more", strings.Join(nodes[:5], ","), len(nodes)-5)
}

// memberWords shows a HyperNode's members as written ("Node:regex ^r1-").
func memberWords(n *rules.HyperNode) string {
	var out []string
	for _, m := range n.Members {
		out = append(out, string(m.Type)+":"+m.Selector)
	}
	return strings.Join(out, "; ")
}
