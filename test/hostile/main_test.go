// Package hostile is the hostile-object suite (issue 42): every row of the
// bounds table of docs/security.md tried with the worst value the API
// server accepts (or, for slurmrestd's answers, the worst a server can
// send), one row at a time and then all at once, against 'kubectl vc
// serve' run as the built binary with its three controllers. For each run
// it checks that serve keeps running, that its peak resident memory stays
// within MaxGrowth of its idle resident memory, and that a queue close
// issued meanwhile is applied within CloseDeadline of being issued.
//
// serve is the binary cptest.BuildBinary makes, without the race detector
// (CGO_ENABLED=0), whatever flags the test itself runs with: its memory is
// what a user's serve would hold.
package hostile

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

var env struct {
	cp         *controlplane.ControlPlane
	binary     string
	kubeconfig string
	kube       kubernetes.Interface
	vc         versioned.Interface
}

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		env.cp, env.binary, env.kubeconfig = e.CP, e.Binary, e.Kubeconfig
		cfg := e.CP.AdminConfig()
		// Hostile objects are large: the test's own clients must not be
		// what limits how fast they are written.
		cfg.QPS, cfg.Burst = 500, 1000
		env.kube = kubernetes.NewForConfigOrDie(cfg)
		env.vc = versioned.NewForConfigOrDie(cfg)
		// Slinky's Controller and RestApi kinds, so that the NodeSet
		// controller runs as beside Slinky (it watches them when served).
		return cptest.InstallSlinkyOperatorCRDs(context.Background(), e.CP)
	}})
}
