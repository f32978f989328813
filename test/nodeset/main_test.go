// Package nodeset tests the NodeSet controller against the real API server
// and a real slurmctld. No kubelet runs: the tests set pod status the way a
// kubelet would, and bind pods to Node objects they create.
package nodeset

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/pods"
)

var (
	cp *controlplane.ControlPlane
	// vcBin is the built binary, for the tests that run it as a process
	// (a --watch); the others run the commands in-process.
	vcBin *binary.CLI
)

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		cp = e.CP
		var err error
		if vcBin, err = binary.NewCLI(e); err != nil {
			return err
		}
		// Slinky's Controller and RestApi kinds, for the tests that find
		// slurmrestd as Slinky's operator does (rest_test.go).
		return cptest.InstallSlinkyOperatorCRDs(context.Background(), cp)
	}})
}

// env is one test's world (nodesets.Env): a namespace, a Slurm cluster
// whose nodes are the pod names the test will use, and a running
// controller.
type env struct{ *nodesets.Env }

func start(t testing.TB, prefix string, slurmNodes int) *env {
	t.Helper()
	return &env{nodesets.Start(t, cp, prefix, slurmNodes)}
}

// startWithoutController is start without the test's own controller, for
// tests that run it another way.
func startWithoutController(t testing.TB, prefix string, slurmNodes int) *env {
	t.Helper()
	return &env{nodesets.StartWithoutController(t, cp, prefix, slurmNodes)}
}

func names(p map[string]*corev1.Pod) string { return pods.Names(p) }
