package nodesetconditions

import (
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
