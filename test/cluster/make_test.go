package cluster

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
)

// TestClusterUpBuildsWhatTheLevelRuns: 'make cluster-up' at the
// controllers or apiserver level neither builds containerd nor installs
// Debian's node packages (no pod runs there); the node level does both.
func TestClusterUpBuildsWhatTheLevelRuns(t *testing.T) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	plan := func(level string) string {
		t.Helper()
		args := []string{"-n", "-C", root, "cluster-up"}
		if level != "" {
			args = append(args, "CLUSTER_LEVEL="+level)
		}
		out, err := exec.Command("make", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, level := range []string{"controllers", "apiserver"} {
		if out := plan(level); strings.Contains(out, "hack/node/") || !strings.Contains(out, "hack/controlplane/build.sh") {
			t.Errorf("make cluster-up CLUSTER_LEVEL=%s would run:\n%s", level, out)
		}
	}
	if out := plan(""); !strings.Contains(out, "hack/node/build.sh") || !strings.Contains(out, "hack/node/install.sh") {
		t.Errorf("make cluster-up (node level) would run:\n%s", out)
	}
}
