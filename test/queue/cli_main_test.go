package queue

import (
	"os/exec"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// env is what the tests of the queue commands share: the binary, the
// kubeconfigs of the admin, of the unprivileged user and of a server that
// does not exist, and a client.
var env struct {
	cli   *binary.CLI
	admin string
	alice string
	dead  string
	vc    versioned.Interface
}

func setupCLI(e *cptest.Env) error {
	c, err := binary.NewCLI(e)
	if err != nil {
		return err
	}
	env.cli, env.admin, env.alice, env.dead = c, c.Admin, c.Alice, c.Dead
	env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
	return nil
}

// result is what one run of the binary produced.
type result = binary.Result

// vcCommand prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func vcCommand(kubeconfig string, args ...string) *exec.Cmd {
	return env.cli.Command(kubeconfig, args...)
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	return binary.Run(t, cmd)
}

// runVC runs the binary as the admin.
func runVC(t *testing.T, args ...string) result {
	t.Helper()
	return env.cli.VC(t, args...)
}

// mustVC runs the binary as the admin and fails the test unless it succeeds.
func mustVC(t *testing.T, args ...string) result {
	t.Helper()
	return env.cli.MustVC(t, args...)
}

// setStatus plays the queue controller: it applies the queue's status with
// the controller's field manager.
func setStatus(t *testing.T, name string, state schedulingv1beta1.QueueState, running int32) {
	t.Helper()
	queues.ApplyStatus(t, env.vc, name, state, running)
}

// commandsFor returns the Commands whose target is the named queue.
func commandsFor(t *testing.T, queue string) []busv1alpha1.Command {
	t.Helper()
	return queues.CommandsFor(t, env.vc, queue)
}

// snapshot is every queue, podgroup and Command on the server.
func snapshot(t *testing.T) string {
	t.Helper()
	return badinput.Snapshot(t, env.vc)
}
