// Package compat proves the foundation against a real kube-apiserver:
// our types, generated clients and CRDs, and their compatibility with the
// upstream Volcano and Slinky CRDs.
package compat

import (
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

// cp is the control plane shared by this package's tests, with our CRDs.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Setup: func(e *cptest.Env) error {
		cp = e.CP
		return nil
	}})
}
