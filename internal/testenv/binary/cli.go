package binary

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

// CLI is the built binary of a package's tests and the kubeconfigs it is
// run with: the admin's, the unprivileged user's
// (controlplane.UnprivilegedUser) and one with the admin's credentials
// for a server that does not exist.
type CLI struct {
	// Bin is the built kubectl-vc.
	Bin string
	// Home is HOME of every run: a directory of the tests, so that no
	// kubeconfig or cache of the machine is read.
	Home string
	// Admin, Alice and Dead are the kubeconfigs.
	Admin, Alice, Dead string
}

// NewCLI is the CLI of a cptest.Main package built with Options.Binary:
// it writes the unprivileged and the dead kubeconfigs into e.Dir.
func NewCLI(e *cptest.Env) (*CLI, error) {
	c := &CLI{Bin: e.Binary, Home: e.Dir, Admin: e.Kubeconfig,
		Alice: filepath.Join(e.Dir, "alice.kubeconfig"), Dead: filepath.Join(e.Dir, "dead.kubeconfig")}
	if err := e.CP.WriteKubeconfig(c.Alice, controlplane.UnprivilegedUser); err != nil {
		return nil, err
	}
	// The same credentials, but a port nothing listens on.
	dead := e.CP.Kubeconfig()
	for _, cl := range dead.Clusters {
		cl.Server = "https://127.0.0.1:1"
	}
	if err := clientcmd.WriteToFile(*dead, c.Dead); err != nil {
		return nil, err
	}
	return c, nil
}

// Command prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func (c *CLI) Command(kubeconfig string, args ...string) *exec.Cmd {
	return Command(c.Bin, c.Home, kubeconfig, args...)
}

// Env is that environment, for commands a test builds itself.
func (c *CLI) Env() []string { return Env(c.Home) }

// Run runs the binary with the given kubeconfig to its end.
func (c *CLI) Run(t testing.TB, kubeconfig string, args ...string) Result {
	t.Helper()
	return Run(t, c.Command(kubeconfig, args...))
}

// VC runs the binary as the admin.
func (c *CLI) VC(t testing.TB, args ...string) Result {
	t.Helper()
	return c.Run(t, c.Admin, args...)
}

// MustVC runs the binary as the admin and fails the test unless it
// succeeds.
func (c *CLI) MustVC(t testing.TB, args ...string) Result {
	t.Helper()
	r := c.VC(t, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl-vc %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}
