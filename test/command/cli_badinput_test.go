package command

import (
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
)

// TestCommandBadInput runs the command commands with input they must
// reject: one 'error:' line on stderr, nothing on stdout, a non-zero exit,
// the server unchanged (badinput.Run).
func TestCommandBadInput(t *testing.T) {
	admin, alice := env.admin, env.alice
	badinput.Run(t, env.cli, env.vc, []badinput.Case{
		{"command list: unknown -o", admin, []string{"command", "list", "-o", "csv"}, `unknown output format "csv"`},
		{"command list: bad selector", admin, []string{"command", "list", "-l", "=x"}, "invalid --selector"},
		{"command list: forbidden", alice, []string{"command", "list", "-A"}, "forbidden"},
		{"command list: extra argument", admin, []string{"command", "list", "x"}, `unknown command "x"`},
	})
}
