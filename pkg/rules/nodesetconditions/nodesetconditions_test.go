package nodesetconditions

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestTable: each type is declared once, each reason once per condition,
// and every False reason says what to do; Fix finds it, and nothing for a
// reason or type the table does not have.
func TestTable(t *testing.T) {
	types := map[string]bool{}
	for _, c := range Table {
		if types[c.Type] {
			t.Errorf("type %s declared twice", c.Type)
		}
		types[c.Type] = true
		if c.Owner == "" || len(c.True) == 0 || len(c.False) == 0 {
			t.Errorf("%s: owner %q, %d True and %d False reasons", c.Type, c.Owner, len(c.True), len(c.False))
		}
		reasons := map[string]bool{}
		for _, r := range append(append([]Reason{}, c.True...), c.False...) {
			if reasons[r.Name] {
				t.Errorf("%s: reason %s twice", c.Type, r.Name)
			}
			reasons[r.Name] = true
		}
		for _, r := range c.False {
			if r.Fix == "" || Fix(c.Type, r.Name) != r.Fix {
				t.Errorf("%s=False %s: fix %q", c.Type, r.Name, Fix(c.Type, r.Name))
			}
		}
	}
	if got := strings.Join(Types(), ","); got != "SpecSupported,SlurmReachable,ServiceReady,DisruptionBudgetReady,SSHConfigReady" {
		t.Errorf("Types() = %s", got)
	}
	if Fix(SlurmReachable, "Refreshed") != "" || Fix("Other", "NoSlurm") != "" {
		t.Error("Fix answers for a True reason or an unknown type")
	}
}

// TestDocsTable: docs/nodeset.md lists the conditions as the table says
// ('make docs' writes them there); a condition, reason or fix added here
// and not there fails, with the lines that differ.
func TestDocsTable(t *testing.T) {
	const path = "../../../docs/nodeset.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceIn(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		var diff []string
		for i := 0; i < max(len(g), len(w)); i++ {
			var gl, wl string
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			if gl != wl {
				diff = append(diff, fmt.Sprintf("line %d:\n  docs:  %s\n  table: %s", i+1, gl, wl))
			}
			if len(diff) == 10 {
				break
			}
		}
		t.Errorf("%s differs from the conditions table (run 'make docs'):\n%s", path, strings.Join(diff, "\n"))
	}
}

// TestReplaceIn: the generated part is put between the markers, what is
// around them is kept, and a document without markers is refused.
func TestReplaceIn(t *testing.T) {
	doc := "before\n" + BeginMarker + "\nstale\n" + EndMarker + "\nafter\n"
	got, err := ReplaceIn(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := "before\n" + Markdown() + "after\n"; got != want {
		t.Errorf("ReplaceIn = %q, want %q", got, want)
	}
	if !strings.Contains(got, "| False | `NoSlurm` |") || !strings.Contains(got, "&lt;namespace&gt;") {
		t.Errorf("the generated part lacks a reason or a fix's namespace: %s", got)
	}
	if _, err := ReplaceIn("no markers\n"); err == nil {
		t.Error("ReplaceIn took a document without markers")
	}
}
