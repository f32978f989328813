// Package compat proves the foundation against a real kube-apiserver:
// our types, generated clients and CRDs, and their compatibility with the
// upstream Volcano CRDs.
package compat

import (
	"os"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/controlplane"
	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
)

// cp is the control plane shared by this package's tests, with our CRDs.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	if os.Getenv("KUBECTL_VC_ORPHAN_CHILD") == "1" {
		// The child of TestControlPlaneDiesWithItsParent: it needs its one
		// control plane, not the shared one, which its SIGKILL would leak.
		orphanChild()
	}
	cptest.Main(m, cptest.Options{Setup: func(e *cptest.Env) error {
		cp = e.CP
		e.Cleanup(func() error { return os.RemoveAll(binDir) }) // the binary built by binary(), if any
		return nil
	}})
}
