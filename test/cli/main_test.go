// Package cli runs the built kubectl-vc binary as a user would, against the
// real local control plane: directly, and as 'kubectl vc' through kubectl's
// plugin discovery.
package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-vc/kubectl-vc/internal/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/test/internal/binary"
	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
)

// env is what every test of the package shares: one control plane, one
// binary, and kubeconfigs for the admin, the unprivileged user and a
// server that does not exist.
var env struct {
	cp      *controlplane.ControlPlane
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
	env.rootDir = root
	env.cp, env.binDir, env.bin, env.admin = e.CP, e.Dir, e.Binary, e.Kubeconfig
	env.alice = filepath.Join(e.Dir, "alice.kubeconfig")
	env.dead = filepath.Join(e.Dir, "dead.kubeconfig")
	if err := e.CP.WriteKubeconfig(env.alice, controlplane.UnprivilegedUser); err != nil {
		return err
	}
	// The same credentials, but a port nothing listens on.
	dead := e.CP.Kubeconfig()
	for _, c := range dead.Clusters {
		c.Server = "https://127.0.0.1:1"
	}
	if err := clientcmd.WriteToFile(*dead, env.dead); err != nil {
		return err
	}
	env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
	return nil
}

// result is what one run of the binary produced.
type result = binary.Result

// command prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func command(kubeconfig string, args ...string) *exec.Cmd {
	return binary.Command(env.bin, env.binDir, kubeconfig, args...)
}

// cleanEnv is that environment, for commands the test builds itself.
func cleanEnv() []string { return binary.Env(env.binDir) }

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	return binary.Run(t, cmd)
}

// vc runs the binary as the admin.
func vc(t *testing.T, args ...string) result {
	t.Helper()
	return runCmd(t, command(env.admin, args...))
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
