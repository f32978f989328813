package nodeset

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"context"
	"fmt"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// TestServeRunsNodeSetController: the controller registered with the
// framework runs under the manager ('serve' with --controllers=nodeset),
// reaching Slurm as its flags say (--slurm-conf, or --slurm-rest-url with
// --slurm-jwt-key-file), and says how in the SlurmReachable condition.
func TestServeRunsNodeSetController(t *testing.T) {
	// No test controller: whatever happens below is the manager's doing.
	e := startWithoutController(t, "served", 1)
	ns, err := framework.Configure("nodeset", e.Slurm.ServeFlags(t)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// WaitForStop: the cleanup returns only once the controller has,
		// before this test's Slurm is stopped and the next test starts.
		done <- controller.Run(ctx, controller.Config{Kubeconfig: cp.AdminConfig(), Controllers: []framework.Controller{ns}, WaitForStop: true})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	e.NewNodeSet("served", 1)
	e.Eventually("pod", func() (bool, string) { n := e.MarkAllReady(); return n == 1, fmt.Sprint(n) })
	e.Eventually("status with Slurm counts", func() (bool, string) {
		st := e.Get("served").Status
		return st.ReadyReplicas == 1 && st.SlurmIdle == 1, fmt.Sprintf("%+v", st)
	})
	want := "read with scontrol, sinfo and squeue (slurm.conf "
	if _, rest := e.Slurm.(*nodesets.RESTBackend); rest {
		want = "read over REST v0.0.4"
	}
	c := meta.FindStatusCondition(e.Get("served").Status.Conditions, "SlurmReachable")
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, want) {
		t.Fatalf("SlurmReachable %+v: want True saying %q", c, want)
	}
}
