// Package doctor proves 'kubectl vc doctor' against the real local API
// server: the built binary run as a user runs it, as the admin and as an
// unprivileged user, on a cluster where the tests write the Leases,
// Deployments, queues and Commands whose state doctor reports.
package doctor

import (
	"os/exec"
	"testing"

	"k8s.io/client-go/kubernetes"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/test/internal/binary"
	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
	"github.com/kubectl-vc/kubectl-vc/test/internal/queues"
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

// result is what one run of the binary produced.
type result = binary.Result

// command prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func command(kubeconfig string, args ...string) *exec.Cmd {
	return env.cli.Command(kubeconfig, args...)
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	return binary.Run(t, cmd)
}

// vc runs the binary as the admin.
func vc(t *testing.T, args ...string) result {
	t.Helper()
	return env.cli.VC(t, args...)
}

// mustVC runs the binary as the admin and fails the test unless it succeeds.
func mustVC(t *testing.T, args ...string) result {
	t.Helper()
	return env.cli.MustVC(t, args...)
}

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	return env.kube
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
