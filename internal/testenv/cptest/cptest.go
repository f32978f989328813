// Package cptest starts the real local control plane for tests, with the
// project's CRDs installed, and makes sure it is stopped afterwards.
package cptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

// Start launches a control plane with our generated CRDs installed and
// stops it when the test ends.
func Start(tb testing.TB) *controlplane.ControlPlane {
	tb.Helper()
	cp, err := StartWithCRDs(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cp.Stop() })
	return cp
}

// StartLevel launches a cluster of the given level (see controlplane.Level)
// with our CRDs installed and stops it when the test ends. A node needs
// root and Debian's runtime packages: without them the test is skipped,
// saying so, except under CI=true, where it fails.
func StartLevel(tb testing.TB, level controlplane.Level) *controlplane.ControlPlane {
	tb.Helper()
	if level >= controlplane.Node {
		RequireNode(tb)
	}
	cp, err := StartWithCRDs(context.Background(), level)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			tb.Errorf("stop the cluster: %v", err)
		}
	})
	return cp
}

// RequireNode skips the test when this machine cannot run the local node
// (not root, or runc, the CNI plugins or iptables missing), with a line
// saying what is missing; under CI=true it fails instead, so CI never
// stops testing on a real node unnoticed.
func RequireNode(tb testing.TB) {
	tb.Helper()
	if err := controlplane.NodeSupported(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v (CI=true: required)", err)
		}
		tb.Skipf("not run on a real node: %v", err)
	}
}

// StartWithCRDs launches a control plane of the given level (none: the API
// server alone) and installs our generated CRDs. The caller stops it (use
// from TestMain, where no testing.TB exists).
func StartWithCRDs(ctx context.Context, level ...controlplane.Level) (*controlplane.ControlPlane, error) {
	opts := controlplane.Options{BeforeControllers: InstallCRDs}
	if len(level) > 0 {
		opts.Level = level[0]
	}
	return controlplane.Start(ctx, opts)
}

// InstallCRDs applies our generated CRDs and waits until they are served
// (a controlplane.Options.BeforeControllers).
func InstallCRDs(ctx context.Context, cp *controlplane.ControlPlane) error {
	list, err := crds.All()
	if err == nil {
		err = crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), keys.CLIManager, list...)
	}
	if err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	return nil
}

// Options says what the tests of a package share: one cluster of Level
// (zero: the API server alone) with our CRDs, the built kubectl-vc when
// Binary is set, and whatever Setup prepares.
type Options struct {
	Level  controlplane.Level
	Binary bool
	// Setup prepares the package's state once the cluster runs; when it
	// fails, no test runs and the package fails.
	Setup func(*Env) error
}

// Env is what Main hands to a package's Setup.
type Env struct {
	CP *controlplane.ControlPlane
	// Dir is a temporary directory removed after the tests.
	Dir string
	// Binary is the built kubectl-vc (Options.Binary), in Dir.
	Binary string
	// Kubeconfig is an admin kubeconfig for CP, in Dir.
	Kubeconfig string

	cleanups []func() error
}

// Cleanup registers f to run after the tests, before the cluster stops
// (last registered, first run), as testing.T.Cleanup does for one test: a
// controller started by Setup is stopped while its API server still
// answers. An error fails the package.
func (e *Env) Cleanup(f func() error) { e.cleanups = append(e.cleanups, f) }

// Main is every test package's TestMain with a shared cluster: it starts
// the cluster, runs Setup and the tests, then the cleanups, stops the
// cluster, removes Dir, and exits with the tests' code (so a TestMain is
// one call and nothing is left behind whatever the result).
func Main(m *testing.M, opts Options) {
	os.Exit(run(m, opts))
}

func run(m *testing.M, opts Options) (code int) {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", what, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kubectl-vc-test-")
	if err != nil {
		return fail("temporary directory", err)
	}
	defer os.RemoveAll(dir)
	e := &Env{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig")}
	if opts.Binary {
		if e.Binary, err = BuildBinary(dir); err != nil {
			return fail("build", err)
		}
	}
	if e.CP, err = StartWithCRDs(context.Background(), opts.Level); err != nil {
		return fail("control plane", err)
	}
	defer func() {
		if err := e.CP.Stop(); err != nil {
			code = fail("stop the control plane", err)
		}
	}()
	defer func() {
		for i := len(e.cleanups) - 1; i >= 0; i-- {
			if err := e.cleanups[i](); err != nil {
				code = fail("test cleanup", err)
			}
		}
	}()
	if err := e.CP.WriteKubeconfig(e.Kubeconfig, controlplane.AdminUser); err != nil {
		return fail("kubeconfig", err)
	}
	if opts.Setup != nil {
		if err := opts.Setup(e); err != nil {
			return fail("test setup", err)
		}
	}
	return m.Run()
}

// BuildBinary builds kubectl-vc from the repository into dir and returns
// its path; extra ldflags (e.g. a version) are passed through. Tests run the
// real binary, as a user would: built as 'make build' and the release
// build it (static, CGO_ENABLED=0, -trimpath, stripped). A plain 'go build'
// on a machine with gcc links against glibc instead, and such a binary
// differs in more than linking: it keeps more of its file resident
// (RssFile), which the memory benchmarks count (docs/benchmarks.md,
// BenchmarkColdStartQueues).
func BuildBinary(dir string, ldflags ...string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kubectl-vc")
	args := []string{"build", "-trimpath", "-ldflags", strings.Join(append([]string{"-s", "-w"}, ldflags...), " "), "-o", bin}
	cmd := exec.Command("go", append(args, "./cmd/kubectl-vc")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kubectl-vc: %v\n%s", err, out)
	}
	return bin, nil
}
