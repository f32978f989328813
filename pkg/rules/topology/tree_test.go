package topology

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
)

func node(name string, cpu string, labels map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
}

func hn(name string, tier int, tierName string, members ...topologyv1alpha1.MemberSpec) topologyv1alpha1.HyperNode {
	return topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier, TierName: tierName, Members: members}}
}

func exact(t topologyv1alpha1.MemberType, name string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: t, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}}}
}

func regex(p string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: p}}}
}

func label(k, v string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}}
}

const (
	nodeT = topologyv1alpha1.MemberTypeNode
	hnT   = topologyv1alpha1.MemberTypeHyperNode
)

var nodes = []corev1.Node{
	node("a1", "2", map[string]string{"rack": "a"}), node("a2", "2", map[string]string{"rack": "a"}),
	node("b1", "2", map[string]string{"rack": "b"}), node("x-b2", "2", nil), node("lone", "4", nil),
}

// TestBuildResolvesMembers: exact names, an unanchored regex and labels
// resolve to nodes as the scheduler's GetMembers does; a HyperNode holds
// its members' nodes; nodes in none are listed.
func TestBuildResolvesMembers(t *testing.T) {
	tr := Build([]topologyv1alpha1.HyperNode{
		hn("rack-a", 1, "rack", label("rack", "a")),
		hn("rack-b", 1, "rack", exact(nodeT, "b1"), regex("b2$")),
		hn("spine", 2, "spine", exact(hnT, "rack-a"), exact(hnT, "rack-b")),
	}, nodes, true)
	if got := strings.Join(tr.Get("rack-b").Nodes, ","); got != "b1,x-b2" {
		t.Errorf("rack-b nodes %s", got)
	}
	if got := strings.Join(tr.Get("spine").Nodes, ","); got != "a1,a2,b1,x-b2" {
		t.Errorf("spine nodes %s", got)
	}
	if tr.Get("rack-a").Parent != "spine" || strings.Join(tr.Roots, ",") != "spine" {
		t.Errorf("parent %q roots %v", tr.Get("rack-a").Parent, tr.Roots)
	}
	if strings.Join(tr.Unplaced, ",") != "lone" || len(tr.Defects) != 0 {
		t.Errorf("unplaced %v defects %v", tr.Unplaced, tr.Defects)
	}
	if p := tr.Placement([]string{"a1", "a2"}); p == nil || p.Name != "rack-a" {
		t.Errorf("placement of a1,a2: %v", p)
	}
	if p := tr.Placement([]string{"a1", "b1"}); p == nil || p.Name != "spine" {
		t.Errorf("placement of a1,b1: %v", p)
	}
	if p := tr.Placement([]string{"a1", "lone"}); p != nil {
		t.Errorf("placement across the top: %v", p.Name)
	}
	if tr.TopTier() != 3 {
		t.Errorf("top tier %d", tr.TopTier())
	}
}

// TestDefects: each defect the scheduler trips on, on its HyperNode; two
// parents and a cycle are fatal.
func TestDefects(t *testing.T) {
	tr := Build([]topologyv1alpha1.HyperNode{
		hn("r1", 1, "", regex("^a")),
		hn("s1", 2, "", exact(hnT, "r1")),
		hn("s2", 2, "", exact(hnT, "r1"), label("rack", "zzz")),
		hn("c1", 3, "", exact(hnT, "c2")),
		hn("c2", 3, "", exact(hnT, "c1"), exact(hnT, "ghost"), regex("(")),
	}, nodes, true)
	kinds := map[string]bool{}
	for _, d := range tr.Defects {
		kinds[d.HyperNode+":"+string(d.Kind)] = d.Fatal
	}
	for want, fatal := range map[string]bool{"r1:TwoParents": true, "s2:NoMatch": false, "c1:Cycle": true,
		"c2:NoMatch": false, "c2:BadSelector": false, "c1:TierOrder": false, "c2:TierOrder": false} {
		got, ok := kinds[want]
		if !ok || got != fatal {
			t.Errorf("defect %s (fatal %v): got %v, %v; all %v", want, fatal, ok, got, tr.Defects)
		}
	}
	if len(tr.Fatal()) != 2 || !tr.Fatal()[0].Fatal {
		t.Errorf("fatal %v", tr.Fatal())
	}
}

// TestNodesUnreadable: without nodes, exact members are taken as written
// and nothing is called a defect for matching nothing.
func TestNodesUnreadable(t *testing.T) {
	tr := Build([]topologyv1alpha1.HyperNode{hn("r", 1, "", exact(nodeT, "a1"), regex("."))}, nil, false)
	if strings.Join(tr.Get("r").Nodes, ",") != "a1" || len(tr.Defects) != 0 || tr.Unplaced != nil {
		t.Errorf("nodes %v defects %v unplaced %v", tr.Get("r").Nodes, tr.Defects, tr.Unplaced)
	}
}

// TestResolve: tier number, tier name, unknown name, soft, and neither.
func TestResolve(t *testing.T) {
	tr := Build([]topologyv1alpha1.HyperNode{hn("r", 1, "rack", regex("^a")), hn("s", 2, "spine", exact(hnT, "r"))}, nodes, true)
	for _, tc := range []struct {
		c        Constraint
		enforced bool
		soft     bool
		tier     int
		words    string
	}{
		{c: Constraint{Tier: ptr.To(1)}, enforced: true, tier: 1, words: "hard, highest tier 1"},
		{c: Constraint{Mode: "hard", TierName: "spine"}, enforced: true, tier: 2, words: `"spine" = tier 2`},
		{c: Constraint{Tier: ptr.To(1), TierName: "spine"}, enforced: true, tier: 1, words: "is not read"},
		{c: Constraint{TierName: "leaf"}, words: `matches no HyperNode's tierName (tier names: rack=1, spine=2)`},
		{c: Constraint{Mode: "soft", Tier: ptr.To(1)}, soft: true, words: "virtual top tier 3"},
		{c: Constraint{Mode: "hard"}, words: "neither highestTierAllowed nor highestTierName"},
	} {
		r := tr.Resolve(tc.c)
		if r.Enforced != tc.enforced || r.Soft != tc.soft || (tc.enforced && r.Tier != tc.tier) || !strings.Contains(r.Words, tc.words) {
			t.Errorf("%+v: %+v", tc.c, r)
		}
	}
	c, all := tr.Candidates(1)
	if len(c) != 1 || c[0].Name != "r" || all {
		t.Errorf("candidates of tier 1: %v %v", c, all)
	}
	if c, all = tr.Candidates(3); len(c) != 2 || c[0].Name != "r" || !all {
		t.Errorf("candidates of tier 3: %v %v", c, all)
	}
}

// TestUsage: idle is allocatable less the requests of unfinished pods
// bound to the node, never below zero; only cpu, memory and extended
// resources are kept.
func TestUsage(t *testing.T) {
	pod := func(node, cpu string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}, Status: corev1.PodStatus{Phase: phase}}
	}
	u := NewUsage(nodes, []corev1.Pod{pod("a1", "1500m", corev1.PodRunning), pod("a1", "1", corev1.PodSucceeded), pod("a2", "3", corev1.PodRunning), pod("", "1", corev1.PodPending)}, true)
	alloc, idle := u.Of([]string{"a1", "a2"})
	if a, i := alloc[corev1.ResourceCPU], idle[corev1.ResourceCPU]; a.String() != "4" || i.String() != "500m" {
		t.Errorf("alloc %s idle %s", a.String(), i.String())
	}
	if s := Short(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, idle); len(s) != 1 || s[0] != "cpu 500m < 1" {
		t.Errorf("short %v", s)
	}
}
