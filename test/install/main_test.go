// Package install proves what 'kubectl vc install' puts in a cluster: the
// CRDs, admission policies and serve's RBAC, applied idempotently and
// removed by uninstall (each against the real API server), the
// ServiceAccount's role exercised by every controller of serve, and serve
// deployed from its image on a real node, as users run it.
package install

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

var (
	// cp is the package's shared control plane, with everything 'install'
	// applies already applied; the tests that need a cluster of another
	// level or a clean one start their own.
	cp         *controlplane.ControlPlane
	binary     string
	kubeconfig string
	ctx        = context.Background()
)

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		cp, binary, kubeconfig = e.CP, e.Binary, e.Kubeconfig
		_, err := cptest.Install(ctx, factory(), &install.Options{})
		return err
	}})
}

// factory returns a Factory like the one the CLI builds from its flags.
func factory() util.Factory { return cptest.Factory(kubeconfig) }

// ownControlPlane starts a control plane for this test alone, for tests
// whose install or uninstall would change what the package's other tests
// share, and a factory that reaches it as the admin.
func ownControlPlane(t *testing.T) (*controlplane.ControlPlane, util.Factory) {
	t.Helper()
	own := cptest.Start(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := own.WriteKubeconfig(kc, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	return own, cptest.Factory(kc)
}

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(cp.AdminConfig())
}

// runInstall runs 'install' with the given selection and returns its output.
func runInstall(t *testing.T, o *install.Options) (string, error) {
	t.Helper()
	return cptest.Install(ctx, factory(), o)
}

func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	queues.Eventually(t, what, cond)
}
