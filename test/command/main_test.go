// Package command proves the command kind, 'kubectl vc command ...', against
// the real local API server: the built binary run as a user runs it, on
// Volcano's bus.volcano.sh Commands (those 'queue open' and 'queue close'
// write, and others the tests write as vcctl would). What a Command does to
// a queue is the queue feature's (test/queue).
package command

import (
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// env is what every test of the package shares: one control plane, the
// binary with its kubeconfigs, and clients.
var env struct {
	cli                *binary.CLI
	admin, alice, dead string
	vc                 versioned.Interface
	kube               kubernetes.Interface
}

// TestMain builds the binary once and starts one control plane for every
// test of the package.
func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		c, err := binary.NewCLI(e)
		if err != nil {
			return err
		}
		env.cli, env.admin, env.alice, env.dead = c, c.Admin, c.Alice, c.Dead
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		return nil
	}})
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
