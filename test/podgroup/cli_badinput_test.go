package podgroup

import (
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
)

// TestPodGroupBadInput runs the podgroup commands with input they must
// reject: one 'error:' line on stderr, nothing on stdout, a non-zero exit,
// the server unchanged (badinput.Run).
func TestPodGroupBadInput(t *testing.T) {
	admin, alice, dead := env.admin, env.alice, env.dead
	badinput.Run(t, env.cli, env.vc, []badinput.Case{
		{"pg list: unknown phase", admin, []string{"podgroup", "list", "--phase", "Sleeping"}, `unknown --phase "Sleeping"`},
		{"pg list: bad queue", admin, []string{"pg", "list", "--queue", "Bad_Q"}, "invalid --queue"},
		{"pg list: names with -A", admin, []string{"pg", "list", "-A", "x"}, "cannot be combined with --all-namespaces"},
		{"pg list: unknown -o", admin, []string{"pg", "list", "-o", "xml"}, `unknown output format "xml"`},
		{"pg list: missing podgroup", admin, []string{"pg", "get", "nope"}, `not found`},
		{"pg describe: missing", admin, []string{"pg", "describe", "nope"}, `not found`},
		{"pg describe: no name", admin, []string{"pg", "describe"}, "name the podgroup to describe"},
		{"pg list: forbidden", alice, []string{"pg", "list", "-A"}, "forbidden"},
		{"pg list: unreachable", dead, []string{"pg", "list"}, "cannot reach the Kubernetes API server"},
	})
}
