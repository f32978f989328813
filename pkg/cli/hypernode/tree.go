package hypernode

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/topology"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	rules "github.com/kubectl-vc/kubectl-vc/pkg/rules/topology"
)

// TreeOptions holds the input of 'hypernode tree'.
type TreeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	// Output is "", json or yaml.
	Output    string
	Watch     bool
	ChunkSize int64

	vc   versioned.Interface
	kube kubernetes.Interface
}

var treeOutputs = []string{"json", "yaml"}

func newTreeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Show the network topology as a tree, with its defects",
		Long: templates.LongDesc(`
			Show the HyperNodes as a tree from the top: Volcano's scheduler puts every
			HyperNode without a parent under a virtual HyperNode over the whole cluster, one
			tier above the highest. Each HyperNode shows its tier, tier name, idle and
			allocatable resources; nodes are the leaves. Then the nodes that belong to no
			HyperNode, and the HyperNodes that cannot hang under the top (a cycle).

			Each defect the scheduler trips on is named on its HyperNode's line: two
			parents and a cycle (the scheduler then schedules no job with a network-topology
			constraint at all), a member that matches nothing, a tier not above its member's.
			-o json|yaml prints the tree nested, with the defects. With --watch the tree is
			printed again whenever a HyperNode changes (nodes and pods as read at the start).`),
		Example: templates.Examples(`
			# The topology
			kubectl vc hypernode tree

			# For scripts: the defects
			kubectl vc hn tree -o json | jq '.defects'

			# Print it again on every change
			kubectl vc hn tree --watch`),
		Args: cobra.NoArgs,
		RunE: util.RunENoArgs(o),
	}
	util.AddOutputFlag(cmd, &o.Output, treeOutputs...)
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After printing the tree, print it again whenever a HyperNode changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// Complete resolves the clients.
func (o *TreeOptions) Complete() error {
	var err error
	o.vc, o.kube, err = util.Clients(o.Factory)
	return err
}

// Validate checks -o and --chunk-size.
func (o *TreeOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	return util.ValidateOutput(o.Output, treeOutputs...)
}

// Run reads the topology and prints the tree; with --watch, again after
// every change of a HyperNode.
func (o *TreeOptions) Run(ctx context.Context) error {
	r := &topology.Reader{VC: o.vc, Kube: o.kube, ChunkSize: o.ChunkSize, Pods: true}
	w, err := r.Read(ctx)
	if err != nil {
		return err
	}
	if !w.Served {
		return util.UsageErrorf("%s", notServed)
	}
	for _, u := range w.Unreadable {
		fmt.Fprintln(o.ErrOut, "Warning: "+u)
	}
	if err := o.print(w); err != nil || !o.Watch {
		return err
	}
	return follow.Each(ctx, w.RV, metav1.ListOptions{}, o.vc.TopologyV1alpha1().HyperNodes().Watch,
		func(t watch.EventType, h *topologyv1alpha1.HyperNode) error {
			if t == watch.Deleted {
				w.Remove(h.Name)
			} else {
				w.Replace(*h)
			}
			return o.print(w)
		})
}

func (o *TreeOptions) print(w *topology.World) error {
	if o.Output != "" {
		vcprinters.WriteData(o.Out, o.Output, treeData(w))
		return nil
	}
	var b bytes.Buffer
	writeTree(&b, w)
	_, err := o.Out.Write(b.Bytes())
	return err
}

// TreeNode is one HyperNode of -o json|yaml, its children inside.
type TreeNode struct {
	Name        string         `json:"name"`
	Tier        int            `json:"tier"`
	TierName    string         `json:"tierName,omitempty"`
	Idle        string         `json:"idle,omitempty"`
	Allocatable string         `json:"allocatable,omitempty"`
	Nodes       []string       `json:"nodes"`
	Defects     []rules.Defect `json:"defects,omitempty"`
	Children    []*TreeNode    `json:"children,omitempty"`
	SeeAlso     string         `json:"seeAbove,omitempty"`
}

// TreeData is the tree of -o json|yaml.
type TreeData struct {
	Top      TreeNode       `json:"top"`
	Unplaced []string       `json:"nodesInNoHyperNode"`
	InCycle  []string       `json:"notUnderTheTop,omitempty"`
	Defects  []rules.Defect `json:"defects"`
	// Unreadable says what could not be read.
	Unreadable []string `json:"unreadable,omitempty"`
}

func treeData(w *topology.World) TreeData {
	t := w.Tree
	d := TreeData{Unplaced: t.Unplaced, Defects: t.Defects, Unreadable: w.Unreadable}
	if d.Unplaced == nil {
		d.Unplaced = []string{}
	}
	if d.Defects == nil {
		d.Defects = []rules.Defect{}
	}
	var all []string
	for i := range w.Nodes {
		all = append(all, w.Nodes[i].Name)
	}
	d.Top = TreeNode{Name: "<cluster>", Tier: t.TopTier(), Nodes: t.Unplaced}
	d.Top.Idle, d.Top.Allocatable = resources(w, all)
	shown := map[string]bool{}
	var build func(name string) *TreeNode
	build = func(name string) *TreeNode {
		h := t.Get(name)
		n := &TreeNode{Name: name, Tier: h.Tier, TierName: h.TierName, Defects: t.DefectsOf(name), Nodes: []string{}}
		if shown[name] {
			n.SeeAlso = "listed under its first parent " + h.Parent
			n.Defects = nil
			return n
		}
		shown[name] = true
		n.Idle, n.Allocatable = resources(w, h.Nodes)
		for _, m := range h.Members {
			if m.Type != topologyv1alpha1.MemberTypeHyperNode {
				n.Nodes = append(n.Nodes, m.Matched...)
			}
		}
		for _, c := range h.Children {
			n.Children = append(n.Children, build(c))
		}
		return n
	}
	for _, r := range t.Roots {
		d.Top.Children = append(d.Top.Children, build(r))
	}
	for _, h := range t.HyperNodes {
		if !shown[h.Name] {
			d.InCycle = append(d.InCycle, h.Name)
		}
	}
	return d
}

// resources shows idle and allocatable of nodes ("" when not known).
func resources(w *topology.World, nodes []string) (idle, alloc string) {
	if !w.Tree.NodesRead {
		return "", ""
	}
	a, i := w.Usage.Of(nodes)
	alloc = vcprinters.OrNone(vcprinters.Resources(a))
	if w.Usage.PodsRead {
		idle = vcprinters.OrNone(vcprinters.Resources(i))
	}
	return idle, alloc
}

// writeTree draws the tree with box-drawing branches, as 'queue tree'
// reads.
func writeTree(out io.Writer, w *topology.World) {
	d := treeData(w)
	fmt.Fprintf(out, "%s (Volcano's virtual top, tier %d)%s\n", d.Top.Name, d.Top.Tier, resWords(&d.Top))
	var draw func(n *TreeNode, prefix string)
	draw = func(n *TreeNode, prefix string) {
		type leaf struct {
			line string
			node *TreeNode
		}
		var items []leaf
		for _, c := range n.Children {
			items = append(items, leaf{node: c})
		}
		if n != &d.Top {
			for _, nd := range n.Nodes {
				items = append(items, leaf{line: "node " + nd})
			}
		}
		for i, it := range items {
			branch, next := "├── ", "│   "
			if i == len(items)-1 {
				branch, next = "└── ", "    "
			}
			if it.node == nil {
				fmt.Fprintln(out, prefix+branch+it.line)
				continue
			}
			fmt.Fprintln(out, prefix+branch+nodeLine(it.node))
			draw(it.node, prefix+next)
		}
	}
	draw(&d.Top, "")
	if len(w.HyperNodes) == 0 {
		fmt.Fprintln(out, "No HyperNodes: the scheduler's virtual top holds every node (tier 1).")
	}
	if w.Tree.NodesRead {
		fmt.Fprintf(out, "Nodes in no HyperNode: %s\n", vcprinters.OrNone(strings.Join(d.Unplaced, ", ")))
	}
	if len(d.InCycle) > 0 {
		fmt.Fprintf(out, "Not under the top (a cycle of members): %s\n", strings.Join(d.InCycle, ", "))
		for _, name := range d.InCycle {
			for _, df := range w.Tree.DefectsOf(name) {
				fmt.Fprintf(out, "  %s: %s\n", df.Kind, df.Message)
			}
		}
	}
}

func nodeLine(n *TreeNode) string {
	s := fmt.Sprintf("%s  tier %d", n.Name, n.Tier)
	if n.TierName != "" {
		s += " (" + n.TierName + ")"
	}
	if n.SeeAlso != "" {
		return s + "  [second parent: " + n.SeeAlso + "]"
	}
	s += resWords(n)
	for _, d := range n.Defects {
		s += "  ! " + string(d.Kind) + ": " + d.Message
	}
	return s
}

func resWords(n *TreeNode) string {
	switch {
	case n.Allocatable == "":
		return ""
	case n.Idle == "":
		return "  allocatable " + n.Allocatable
	}
	return "  idle " + n.Idle + " of " + n.Allocatable
}
