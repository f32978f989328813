package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// TestNodeSetRefusesToStartWithoutSlurm: the manager asks the controllers
// whether they can run before it serves, elects or connects; the NodeSet
// controller told to use the Slurm commands (--slurm-conf) without
// scontrol on PATH (as in the image) stops it at once.
// The API server address is unreachable: reaching it would fail otherwise.
func TestNodeSetRefusesToStartWithoutSlurm(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ctrls []framework.Controller
	for _, n := range []string{"queue", "nodeset"} {
		var args []string
		if n == "nodeset" {
			args = []string{"--slurm-conf=/etc/slurm/slurm.conf"}
		}
		c, err := framework.Configure(n, args...)
		if err != nil {
			t.Fatal(err)
		}
		ctrls = append(ctrls, c)
	}
	err := controller.Run(ctx, controller.Config{Kubeconfig: &rest.Config{Host: "http://127.0.0.1:1"},
		Controllers: ctrls, MetricsAddr: "0", HealthAddr: "0",
		LeaderElection: election("x", "x", 3*time.Second, 2*time.Second, time.Second),
	})
	if err == nil || !strings.HasPrefix(err.Error(), "controller nodeset cannot start: the NodeSet controller needs the Slurm client commands and a munge key") {
		t.Fatalf("got %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the refusal waited for something")
	}
}
