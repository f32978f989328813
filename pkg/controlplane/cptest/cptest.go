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

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane"
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
	opts := controlplane.Options{}
	if len(level) > 0 {
		opts.Level = level[0]
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	list, err := crds.All()
	if err == nil {
		err = crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), keys.CLIManager, list...)
	}
	if err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("install CRDs: %w", err)
	}
	return cp, nil
}

// Main runs a package's tests against one shared control plane, stored by
// set before the tests run, stops it afterwards whatever the result, and
// exits with the tests' code.
func Main(m *testing.M, set func(*controlplane.ControlPlane)) {
	os.Exit(Run(m, set))
}

// Run is Main without the exit: it returns the tests' code, so a TestMain
// that made temporary files can remove them with a defer before it calls
// os.Exit (which runs no deferred calls).
func Run(m *testing.M, set func(*controlplane.ControlPlane)) int {
	return run(m, func(cp *controlplane.ControlPlane) error { set(cp); return nil })
}

// run starts the shared control plane, lets setup prepare the package's
// state (the tests do not run when it fails), runs the tests and stops
// the control plane.
func run(m *testing.M, setup func(*controlplane.ControlPlane) error) int {
	cp, err := StartWithCRDs(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "control plane:", err)
		return 1
	}
	defer func() { _ = cp.Stop() }()
	if err := setup(cp); err != nil {
		fmt.Fprintln(os.Stderr, "test setup:", err)
		return 1
	}
	return m.Run()
}

// RunWithBinary is Run for packages that drive the built kubectl-vc: it
// builds the binary and writes an admin kubeconfig into one temporary
// directory, hands both to set with the control plane, and removes the
// directory once the tests are done.
func RunWithBinary(m *testing.M, set func(cp *controlplane.ControlPlane, binary, kubeconfig string)) int {
	dir, err := os.MkdirTemp("", "kubectl-vc-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary, err := BuildBinary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	return run(m, func(cp *controlplane.ControlPlane) error {
		if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
			return err
		}
		set(cp, binary, kubeconfig)
		return nil
	})
}

// BuildBinary builds kubectl-vc from the repository into dir and returns
// its path; extra ldflags (e.g. a version) are passed through. Tests run the
// real binary, as a user would.
func BuildBinary(dir string, ldflags ...string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kubectl-vc")
	args := []string{"build", "-o", bin}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(ldflags, " "))
	}
	cmd := exec.Command("go", append(args, "./cmd/kubectl-vc")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build kubectl-vc: %v\n%s", err, out)
	}
	return bin, nil
}
