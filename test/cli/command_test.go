package cli

import (
	"strings"
	"testing"
)

func TestCommandList(t *testing.T) {
	mustVC(t, "queue", "create", "e2e-cmdlist")
	mustVC(t, "queue", "close", "e2e-cmdlist", "--command-namespace", "kube-public")
	r := mustVC(t, "command", "list", "-A")
	found := false
	for _, l := range strings.Split(r.Stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "kube-public" && strings.HasPrefix(f[1], "e2e-cmdlist-closequeue-") && f[2] == "CloseQueue" && f[3] == "Queue/e2e-cmdlist" {
			found = true
		}
	}
	if !found {
		t.Errorf("command list -A:\n%s", r.Stdout)
	}
	r = mustVC(t, "command", "list", "-n", "kube-public", "-o", "name")
	if !strings.HasPrefix(strings.TrimSpace(r.Stdout), "command.bus.volcano.sh/e2e-cmdlist-closequeue-") {
		t.Errorf("-o name: %q", r.Stdout)
	}
}

// TestCompletion asks the binary for completions as the shell scripts do.
