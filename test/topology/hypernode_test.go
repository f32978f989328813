package topology

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/hypernode"
)

// Every member kind resolves to the nodes the scheduler would take: an
// exact name, an unanchored regular expression, node labels, and a
// HyperNode member's nodes; list shows them with the idle and
// allocatable resources under each, the tree draws them with the nodes
// in no HyperNode, and describe names the podgroup placed under it.
func TestMembersListTreeDescribe(t *testing.T) {
	w := newWorld(t)
	ns := w.ns()
	a1, a2 := w.node("a1", "4", map[string]string{"rack": w.n("a")}), w.node("a2", "4", map[string]string{"rack": w.n("a")})
	b1, b2 := w.node("b1", "2", nil), w.node("b2x", "2", nil)
	lone := w.node("lone", "8", nil)
	rackA := w.hyperNode("rack-a", 1, "rack", label("rack", w.n("a")))
	rackB := w.hyperNode("rack-b", 1, "rack", exact(nodeM, b1), regex(w.n("b2")))
	spine := w.hyperNode("spine", 2, "spine", exact(hnM, rackA), exact(hnM, rackB))
	group(t, ns, "train", "default", "3", nil, "")
	pod(t, ns, "train-0", "train", "1500m", a1)
	pod(t, ns, "train-1", "train", "1500m", a2)

	wide := env.cli.MustVC(t, "hypernode", "list", rackA, rackB, spine, "-o", "wide").Stdout
	t.Logf("$ kubectl vc hypernode list -o wide\n%s", wide)
	rows := map[string]string{}
	for _, l := range strings.Split(wide, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	contains(t, "rack-a row", rows[rackA], " 1 ", "rack", spine, a1+","+a2, "cpu=5,memory=16Gi", "cpu=8,memory=16Gi", "Node:labels rack="+w.n("a"))
	contains(t, "rack-b row", rows[rackB], spine, b1+","+b2, "Node:exact "+b1, "Node:regex "+w.n("b2"))
	contains(t, "spine row", rows[spine], " 2 ", "spine", "<none>", a1+","+a2+","+b1+","+b2, "cpu=9,", "cpu=12,", "HyperNode:exact "+rackA)
	if strings.Contains(wide, lone) {
		t.Errorf("lone node under a HyperNode:\n%s", wide)
	}

	// The tree: the virtual top, the spine, the racks, nodes as leaves,
	// and the node in no HyperNode.
	text := env.cli.MustVC(t, "hn", "tree").Stdout
	t.Logf("$ kubectl vc hn tree\n%s", text)
	contains(t, "tree", text, "<cluster> (Volcano's virtual top, tier 3)", "└── "+spine+"  tier 2 (spine)", "├── "+rackA+"  tier 1 (rack)  idle cpu=5,memory=16Gi of cpu=8,memory=16Gi",
		"│   ├── node "+a1, "    └── node "+b2)
	if !strings.Contains(text, "Nodes in no HyperNode: ") || !strings.Contains(strings.SplitN(text, "Nodes in no HyperNode: ", 2)[1], lone) {
		t.Errorf("%s not listed in no HyperNode:\n%s", lone, text)
	}
	var data hypernode.TreeData
	if err := json.Unmarshal([]byte(env.cli.MustVC(t, "hn", "tree", "-o", "json").Stdout), &data); err != nil {
		t.Fatal(err)
	}
	var sp *hypernode.TreeNode
	for _, c := range data.Top.Children {
		if c.Name == spine {
			sp = c
		}
	}
	if sp == nil || len(sp.Children) != 2 || sp.Children[0].Name != rackA || strings.Join(sp.Children[1].Nodes, ",") != b1+","+b2 {
		t.Errorf("tree -o json: spine %+v", sp)
	}

	desc := env.cli.MustVC(t, "hn", "describe", rackA).Stdout
	t.Logf("$ kubectl vc hn describe %s\n%s", rackA, desc)
	contains(t, "describe", desc, "Tier:", "Parent:", spine, "labels rack="+w.n("a"), a1+","+a2, "Idle:", "cpu=5",
		ns+"/train", "Placed Podgroups:")
	if !strings.Contains(desc, ns+"/train  "+rackA) && !strings.Contains(strings.Join(strings.Fields(desc), " "), ns+"/train "+rackA+" "+a1+","+a2) {
		t.Errorf("train not placed in %s:\n%s", rackA, desc)
	}
	name := env.cli.MustVC(t, "hn", "list", rackA, "-o", "name").Stdout
	if name != "hypernode.topology.volcano.sh/"+rackA+"\n" {
		t.Errorf("-o name: %q", name)
	}
}

// --watch prints a row for a HyperNode created after the list.
func TestListWatch(t *testing.T) {
	w := newWorld(t)
	n := w.node("n1", "2", nil)
	lines := env.cli.StartWatch(t, "hypernode", "list", "--watch")
	env.cli.MustVC(t, "hypernode", "list")
	rack := w.hyperNode("rack", 1, "rack", exact(nodeM, n))
	row := strings.Join(lines.WaitFor(t, rack), " ")
	contains(t, "watched row", row, rack, "rack", n)
}

// Bad input: one line on stderr, nothing on stdout, a non-zero exit.
func TestBadInput(t *testing.T) {
	admin := env.cli.Admin
	badinput.Run(t, env.cli, env.vc, []badinput.Case{
		{"describe without a name", admin, []string{"hypernode", "describe"}, "name the hypernode"},
		{"invalid name", admin, []string{"hypernode", "list", "Not_A_Name"}, "invalid hypernode name"},
		{"missing", admin, []string{"hypernode", "describe", "nowhere"}, `hypernode "nowhere" not found`},
		{"tree -o wide", admin, []string{"hypernode", "tree", "-o", "wide"}, "output format"},
		{"tree with an argument", admin, []string{"hypernode", "tree", "x"}, "unknown"},
	})
}
