// Package cli proves the feature "the command line's shared conventions":
// what holds for every kind and verb rather than for one, the built
// kubectl-vc run as a user runs it against the real local control plane,
// directly and as 'kubectl vc' through kubectl's plugin discovery. That is
// the plugin's name, discovery and completion helper under kubectl, the
// version and the completion scripts, the completion machinery, paged lists (--chunk-size, printed page by page) and the
// list flags of every kind, a refused watch, an admission policy's refusal
// and credentials as the user sees them, events folded in describe, and
// the documentation's session. Each kind's own commands are proven in that
// kind's suite (test/queue, test/podgroup, test/command, test/job,
// test/nodeset, test/doctor); their bad input against the convention of
// internal/testenv/badinput.
package cli

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/podgroups"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// env is what every test of the package shares: one control plane, one
// binary, and kubeconfigs for the admin, the unprivileged user and a
// server that does not exist.
var env struct {
	cp      *controlplane.ControlPlane
	cli     *binary.CLI
	binDir  string
	bin     string
	admin   string
	alice   string
	dead    string
	vc      versioned.Interface
	rootDir string
}

// TestMain builds the binary once and starts one control plane for every
// test of the package.
func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: setup})
}

func setup(e *cptest.Env) error {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	c, err := binary.NewCLI(e)
	if err != nil {
		return err
	}
	env.rootDir = root
	env.cp, env.cli = e.CP, c
	env.binDir, env.bin, env.admin, env.alice, env.dead = c.Home, c.Bin, c.Admin, c.Alice, c.Dead
	env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
	e.Cleanup(func() error { return os.RemoveAll(versionedDir) }) // the binary built by versionedBinary, if any
	return nil
}

// result is what one run of the binary produced.
type result = binary.Result

// command prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func command(kubeconfig string, args ...string) *exec.Cmd {
	return env.cli.Command(kubeconfig, args...)
}

// cleanEnv is that environment, for commands the test builds itself.
func cleanEnv() []string { return env.cli.Env() }

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
	r := vc(t, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl-vc %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(env.cp.AdminConfig())
}

func getQueue(t *testing.T, name string) *schedulingv1beta1.Queue {
	t.Helper()
	return queues.Get(t, env.vc, name)
}

// setStatus plays the queue controller: it applies the queue's status with
// the controller's field manager.
func setStatus(t *testing.T, name string, state schedulingv1beta1.QueueState, running int32) {
	t.Helper()
	queues.ApplyStatus(t, env.vc, name, state, running)
}

// makePodGroups creates, once per run, namespace e2e-pg with podgroups
// train (queue q-pg, Running, one member pod on node-7, one event) and eval.
func makePodGroups(t *testing.T) {
	t.Helper()
	podgroups.MakeExample(t, kube(t), env.vc)
}

// deleteQueuesAfter deletes the named queues when the test ends, and the
// Commands written for them ('queue close' and 'open' write one, and no
// controller runs here to take it): the tests share one control plane, and
// a later run of the test in this process (go test -count=N) creates the
// same names again. Nothing holds a queue (no finalizers, no admission
// policy once the test's own is gone), so they are gone when it returns.
// Register it before what it must outlast, such as a policy guarding the
// queue: cleanups run last registered first.
func deleteQueuesAfter(t *testing.T, names ...string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		for _, name := range names {
			for _, c := range queues.CommandsFor(t, env.vc, name) {
				if err := env.vc.BusV1alpha1().Commands(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("cleanup: %v", err)
				}
			}
			if err := env.vc.SchedulingV1beta1().Queues().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
}

// namespace is a namespace of this run of the test, emptied and deleted
// after it (internal/testenv/namespaces).
func namespace(t *testing.T, name string) string {
	t.Helper()
	return namespaces.PerRun(t, kube(t), env.vc, name)
}
