package podgroup

import (
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/podgroups"
)

// runVC runs the binary as the admin.
func runVC(t *testing.T, args ...string) binary.Result {
	t.Helper()
	return env.cli.VC(t, args...)
}

// mustVC runs the binary as the admin and fails the test unless it succeeds.
func mustVC(t *testing.T, args ...string) binary.Result {
	t.Helper()
	return env.cli.MustVC(t, args...)
}

// startWatch starts the binary as the admin and reads its output.
func startWatch(t *testing.T, args ...string) *binary.LineReader {
	t.Helper()
	return env.cli.StartWatch(t, args...)
}

// makePodGroups creates, once per run, namespace e2e-pg with podgroups
// train (queue q-pg, Running, one member pod on node-7, one event) and eval.
func makePodGroups(t *testing.T) {
	t.Helper()
	podgroups.MakeExample(t, env.kube, env.vc)
}
