// Package topology is Volcano's network topology as its scheduler builds it
// from HyperNodes and nodes (pkg/scheduler/api/hyper_node_info.go in
// Volcano): each HyperNode's members resolved to nodes, the tree of
// HyperNodes, the defects that make the scheduler give up on every job
// with a network-topology constraint, and the resources under each
// HyperNode. It reads nothing itself: 'hypernode list|tree|describe',
// 'why' and 'doctor' read the objects and share this one reading.
package topology

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
)

// DefectKind names a defect of the tree, for scripts.
type DefectKind string

const (
	// TwoParents: a HyperNode is a member of two HyperNodes. Volcano's
	// scheduler then stops building its view of the tree and schedules no
	// job that has a network-topology constraint (addChild's error).
	TwoParents DefectKind = "TwoParents"
	// Cycle: HyperNodes are members of each other, around a loop; the
	// scheduler stops as for TwoParents.
	Cycle DefectKind = "Cycle"
	// NoMatch: a member matches no node, or names no HyperNode. The
	// scheduler carries on without it.
	NoMatch DefectKind = "NoMatch"
	// TierOrder: a HyperNode's tier is not above the tier of a HyperNode
	// member: the scheduler tries HyperNodes lowest tier first, so such a
	// parent is tried before, or with, what it contains.
	TierOrder DefectKind = "TierOrder"
	// BadSelector: a regular expression that does not compile or a label
	// selector that is not one; the scheduler treats it as matching nothing.
	BadSelector DefectKind = "BadSelector"
)

// Defect is one defect of the tree, on one HyperNode.
type Defect struct {
	Kind      DefectKind `json:"kind"`
	HyperNode string     `json:"hyperNode"`
	Message   string     `json:"message"`
	// Fatal defects make the scheduler skip every job with a network
	// topology constraint (its view of the tree is not ready).
	Fatal bool `json:"fatal"`
}

// Member is one member of a HyperNode and what it resolved to.
type Member struct {
	Type topologyv1alpha1.MemberType
	// Selector is the member's selector in words ("exact node-1",
	// "regex ^rack1-", "labels rack=r1").
	Selector string
	// Matched are the nodes (Node members) or the HyperNode (HyperNode
	// members) it resolved to.
	Matched []string
}

// HyperNode is one HyperNode with its place in the tree.
type HyperNode struct {
	Obj      *topologyv1alpha1.HyperNode
	Name     string
	Tier     int
	TierName string
	// Parents are the HyperNodes that list it as a member (more than one
	// is a defect); Parent is the first of them.
	Parents []string
	Parent  string
	// Children are its HyperNode members that exist.
	Children []string
	// Members are its members as resolved.
	Members []Member
	// Nodes are every node under it, through its HyperNode members too.
	Nodes []string
}

// Tree is the topology read from HyperNodes and nodes.
type Tree struct {
	// HyperNodes are sorted by name.
	HyperNodes []*HyperNode
	// Roots are the HyperNodes no other lists as a member.
	Roots []string
	// Unplaced are the nodes under no HyperNode (empty when nodes were
	// not read).
	Unplaced []string
	Defects  []Defect
	// NodesRead tells whether the nodes could be read: without them a
	// regex or label member resolves to nothing known, and exact members
	// are taken as named.
	NodesRead bool

	byName map[string]*HyperNode
	nodes  map[string]*corev1.Node
}

// Get returns the HyperNode of that name, nil when there is none.
func (t *Tree) Get(name string) *HyperNode { return t.byName[name] }

// Fatal returns the defects that make the scheduler skip every job with a
// network topology constraint.
func (t *Tree) Fatal() []Defect {
	var out []Defect
	for _, d := range t.Defects {
		if d.Fatal {
			out = append(out, d)
		}
	}
	return out
}

// DefectsOf returns the defects named on one HyperNode.
func (t *Tree) DefectsOf(name string) []Defect {
	var out []Defect
	for _, d := range t.Defects {
		if d.HyperNode == name {
			out = append(out, d)
		}
	}
	return out
}

// Build resolves the HyperNodes' members against nodes and builds the
// tree, as Volcano's scheduler does: a Node member's exact name is taken
// as written, a regular expression matches anywhere in a node's name (Go's
// regexp, unanchored), a label selector matches node labels; a HyperNode
// member is found by exact name only. nodesRead false: nodes could not be
// read (nodes is then empty).
func Build(hns []topologyv1alpha1.HyperNode, nodes []corev1.Node, nodesRead bool) *Tree {
	t := &Tree{NodesRead: nodesRead, byName: map[string]*HyperNode{}, nodes: map[string]*corev1.Node{}}
	for i := range nodes {
		t.nodes[nodes[i].Name] = &nodes[i]
	}
	for i := range hns {
		h := &hns[i]
		t.byName[h.Name] = &HyperNode{Obj: h, Name: h.Name, Tier: h.Spec.Tier, TierName: h.Spec.TierName}
	}
	names := make([]string, 0, len(t.byName))
	for n := range t.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.HyperNodes = append(t.HyperNodes, t.byName[n])
	}
	for _, h := range t.HyperNodes {
		t.resolve(h)
	}
	for _, h := range t.HyperNodes {
		if len(h.Parents) == 0 {
			t.Roots = append(t.Roots, h.Name)
		}
		if len(h.Parents) > 1 {
			t.defect(TwoParents, h.Name, true, "is a member of %d HyperNodes (%s): Volcano's scheduler schedules no job with a network topology constraint until it has one parent",
				len(h.Parents), strings.Join(h.Parents, ", "))
		}
		for _, c := range h.Children {
			if ch := t.byName[c]; ch != nil && h.Tier <= ch.Tier {
				t.defect(TierOrder, h.Name, false, "tier %d is not above the tier %d of its member %s: the scheduler tries lower tiers first, so it may try %s before or with %s",
					h.Tier, ch.Tier, c, h.Name, c)
			}
		}
	}
	t.cycles()
	for _, h := range t.HyperNodes {
		h.Nodes = t.under(h.Name, map[string]bool{})
	}
	if nodesRead {
		placed := map[string]bool{}
		for _, h := range t.HyperNodes {
			for _, n := range h.Nodes {
				placed[n] = true
			}
		}
		for i := range nodes {
			if !placed[nodes[i].Name] {
				t.Unplaced = append(t.Unplaced, nodes[i].Name)
			}
		}
		sort.Strings(t.Unplaced)
	}
	sort.SliceStable(t.Defects, func(i, j int) bool {
		if t.Defects[i].Fatal != t.Defects[j].Fatal {
			return t.Defects[i].Fatal
		}
		return t.Defects[i].HyperNode < t.Defects[j].HyperNode
	})
	return t
}

func (t *Tree) defect(kind DefectKind, hn string, fatal bool, format string, args ...any) {
	t.Defects = append(t.Defects, Defect{Kind: kind, HyperNode: hn, Fatal: fatal, Message: "HyperNode " + hn + " " + fmt.Sprintf(format, args...)})
}

// resolve resolves h's members and records it as its HyperNode members'
// parent.
func (t *Tree) resolve(h *HyperNode) {
	for _, m := range h.Obj.Spec.Members {
		sel := m.Selector
		mem := Member{Type: m.Type}
		switch {
		case sel.ExactMatch != nil:
			mem.Selector = "exact " + sel.ExactMatch.Name
		case sel.RegexMatch != nil:
			mem.Selector = "regex " + sel.RegexMatch.Pattern
		case sel.LabelMatch != nil:
			mem.Selector = "labels " + metav1.FormatLabelSelector(sel.LabelMatch)
		default:
			mem.Selector = "<no selector>"
		}
		switch m.Type {
		case topologyv1alpha1.MemberTypeHyperNode:
			if sel.ExactMatch == nil {
				t.defect(NoMatch, h.Name, false, "has a HyperNode member by %s: HyperNode members are found by exact name only, the scheduler ignores it", mem.Selector)
				break
			}
			name := sel.ExactMatch.Name
			c := t.byName[name]
			if c == nil {
				t.defect(NoMatch, h.Name, false, "lists HyperNode %s as a member, and there is none of that name", name)
				break
			}
			mem.Matched = []string{name}
			h.Children = appendOnce(h.Children, name)
			c.Parents = appendOnce(c.Parents, h.Name)
			if c.Parent == "" {
				c.Parent = h.Name
			}
		default:
			mem.Matched = t.match(h.Name, sel)
			if len(mem.Matched) == 0 && t.NodesRead {
				t.defect(NoMatch, h.Name, false, "has a member (%s) that matches no node", mem.Selector)
			}
		}
		h.Members = append(h.Members, mem)
	}
	sort.Strings(h.Children)
}

// match returns the nodes a Node member's selector matches.
func (t *Tree) match(hn string, sel topologyv1alpha1.MemberSelector) []string {
	var out []string
	switch {
	case sel.ExactMatch != nil:
		if _, ok := t.nodes[sel.ExactMatch.Name]; ok || !t.NodesRead {
			out = append(out, sel.ExactMatch.Name)
		}
	case sel.RegexMatch != nil:
		re, err := regexp.Compile(sel.RegexMatch.Pattern)
		if err != nil {
			t.defect(BadSelector, hn, false, "has a regex member %q that does not compile (%v): it matches nothing", sel.RegexMatch.Pattern, err)
			return nil
		}
		for n := range t.nodes {
			if re.MatchString(n) {
				out = append(out, n)
			}
		}
	case sel.LabelMatch != nil:
		if len(sel.LabelMatch.MatchLabels) == 0 && len(sel.LabelMatch.MatchExpressions) == 0 {
			return nil // the scheduler matches nothing with an empty selector
		}
		s, err := metav1.LabelSelectorAsSelector(sel.LabelMatch)
		if err != nil {
			t.defect(BadSelector, hn, false, "has a label member that is not a selector (%v): it matches nothing", err)
			return nil
		}
		for n, node := range t.nodes {
			if s.Matches(labels.Set(node.Labels)) {
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// cycles names every loop of HyperNode members once.
func (t *Tree) cycles() {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		for _, c := range t.byName[n].Children {
			switch color[c] {
			case white:
				visit(c)
			case grey:
				i := len(stack) - 1
				for stack[i] != c {
					i--
				}
				loop := append(append([]string{}, stack[i:]...), c)
				t.defect(Cycle, c, true, "is in a cycle of members (%s): Volcano's scheduler schedules no job with a network topology constraint until it is broken",
					strings.Join(loop, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, h := range t.HyperNodes {
		if color[h.Name] == white {
			visit(h.Name)
		}
	}
}

// under returns the nodes under name, guarding against cycles.
func (t *Tree) under(name string, seen map[string]bool) []string {
	if seen[name] {
		return nil
	}
	seen[name] = true
	h := t.byName[name]
	set := map[string]bool{}
	for _, m := range h.Members {
		if m.Type == topologyv1alpha1.MemberTypeHyperNode {
			for _, c := range m.Matched {
				for _, n := range t.under(c, seen) {
					set[n] = true
				}
			}
			continue
		}
		for _, n := range m.Matched {
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// TierNames maps each tier name to its tier, as the scheduler's
// HyperNodeTierNameMap does (a name given to two tiers: the last read wins
// there; here the highest, and Conflicts says so).
func (t *Tree) TierNames() map[string]int {
	out := map[string]int{}
	for _, h := range t.HyperNodes {
		if h.TierName == "" {
			continue
		}
		if cur, ok := out[h.TierName]; !ok || h.Tier > cur {
			out[h.TierName] = h.Tier
		}
	}
	return out
}

// Tiers returns the tiers in use, lowest first.
func (t *Tree) Tiers() []int {
	seen := map[int]bool{}
	var out []int
	for _, h := range t.HyperNodes {
		if !seen[h.Tier] {
			seen[h.Tier] = true
			out = append(out, h.Tier)
		}
	}
	sort.Ints(out)
	return out
}

// Placement returns the lowest-tier HyperNode holding every one of nodes
// (the HyperNode a running group was placed in), nil when none does or
// nodes is empty. Between two of the same tier, the first by name.
func (t *Tree) Placement(nodes []string) *HyperNode {
	if len(nodes) == 0 {
		return nil
	}
	var best *HyperNode
	for _, h := range t.HyperNodes {
		if !containsAll(h.Nodes, nodes) {
			continue
		}
		if best == nil || h.Tier < best.Tier {
			best = h
		}
	}
	return best
}

func containsAll(set, want []string) bool {
	for _, w := range want {
		i := sort.SearchStrings(set, w)
		if i == len(set) || set[i] != w {
			return false
		}
	}
	return true
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
