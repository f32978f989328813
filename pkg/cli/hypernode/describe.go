package hypernode

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/topology"
	rules "github.com/kubectl-vc/kubectl-vc/pkg/rules/topology"
)

// describeHelp is the help of 'hypernode describe'.
var describeHelp = kind.Help{
	Short: "Show a HyperNode in detail",
	Long: `
			Show a HyperNode: tier and tier name, parent and children, each member with the
			nodes (or HyperNode) it resolves to, every node under it with the idle and
			allocatable resources together, its defects, and the podgroups placed under it:
			those whose running pods are all on its nodes, with the lowest HyperNode that
			holds them (Volcano's scheduler keeps a job's HyperNode in memory only; this is
			where its pods are). Then its events.`,
	Example: `
			kubectl vc hypernode describe rack-1`,
}

// describeHyperNode writes the HyperNode's place in the tree, its members
// and the podgroups placed under it.
func describeHyperNode(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, h *topologyv1alpha1.HyperNode) {
	r := &topology.Reader{VC: o.Client, Kube: o.Kube, Pods: true}
	w, err := r.Read(ctx)
	if err != nil {
		d.CannotList(0, "Topology", err)
		return
	}
	w.Replace(*h) // the copy just read
	n := w.Tree.Get(h.Name)
	line := d.Line
	line(0, "Tier", h.Spec.Tier)
	line(0, "Tier Name", vcprinters.OrNone(h.Spec.TierName))
	line(0, "Parent", vcprinters.OrNone(strings.Join(n.Parents, ", ")))
	line(0, "Children", vcprinters.OrNone(strings.Join(n.Children, ", ")))
	var rows []string
	for _, m := range n.Members {
		matched := strings.Join(m.Matched, ",")
		if len(m.Matched) == 0 {
			matched = "<nothing>"
			if !w.Tree.NodesRead && m.Type == topologyv1alpha1.MemberTypeNode {
				matched = "<unknown: nodes not readable>"
			}
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s", m.Type, m.Selector, matched))
	}
	d.Table(0, "Members", "Type\tSelector\tResolves To", rows)
	for _, u := range w.Unreadable {
		line(0, "Not Read", u)
	}
	if w.Tree.NodesRead {
		line(0, "Nodes", vcprinters.OrNone(strings.Join(n.Nodes, ", ")))
		alloc, idle := w.Usage.Of(n.Nodes)
		line(0, "Allocatable", vcprinters.OrNone(vcprinters.Resources(alloc)))
		if w.Usage.PodsRead {
			line(0, "Idle", vcprinters.OrNone(vcprinters.Resources(idle)))
		}
	}
	var defects []string
	for _, df := range w.Tree.DefectsOf(h.Name) {
		defects = append(defects, fmt.Sprintf("%s\t%s", df.Kind, df.Message))
	}
	d.Table(0, "Defects", "Kind\tMessage", defects)
	if w.Usage.PodsRead {
		d.Table(0, "Placed Podgroups", "Podgroup\tHyperNode\tNodes", placedUnder(w, n))
	}
}

// placedUnder lists the podgroups whose bound, unfinished pods all sit
// on nodes under n: "ns/group  lowest-hypernode  nodes".
func placedUnder(w *topology.World, n *rules.HyperNode) []string {
	groups := map[string]map[string]bool{}
	for i := range w.Pods {
		p := &w.Pods[i]
		g := p.Annotations[keys.KubeGroupName]
		if g == "" || p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		key := p.Namespace + "/" + g
		if groups[key] == nil {
			groups[key] = map[string]bool{}
		}
		groups[key][p.Spec.NodeName] = true
	}
	var rows []string
	for key, set := range groups {
		nodes := make([]string, 0, len(set))
		for nd := range set {
			nodes = append(nodes, nd)
		}
		sort.Strings(nodes)
		at := w.Tree.Placement(nodes)
		if at == nil || !within(w.Tree, at.Name, n.Name) {
			continue
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s", key, at.Name, strings.Join(nodes, ",")))
	}
	sort.Strings(rows)
	return rows
}

// within tells whether name is top or below it (through first parents).
func within(t *rules.Tree, name, top string) bool {
	for seen := map[string]bool{}; name != "" && !seen[name]; name = t.Get(name).Parent {
		if name == top {
			return true
		}
		seen[name] = true
	}
	return false
}
