package bench

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/nodesets"
)

// BenchmarkScaleOutIn measures, end to end against the real API server and
// slurmctld, how long the controller takes to bring a NodeSet from 0 to 20
// pods (status reporting 20), and back to 0 through cordon → drain → delete
// of 20 idle Slurm nodes. Slurm is the one $KVC_TEST_SLURM names, as in
// test/nodeset (default: Debian 12's slurmctld, reached with its commands).
func BenchmarkScaleOutIn(b *testing.B) {
	const n = 20
	cp := cptest.Start(b)
	e := nodesets.Start(b, cp, "bench", n)
	var out, in time.Duration
	for i := range b.N {
		name := "bench"
		if i > 0 {
			// Same name (the Slurm nodes are named after it); wait for the
			// previous round's NodeSet to be gone.
			e.Eventually("previous NodeSet gone", func() (bool, string) {
				_, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
				return err != nil, ""
			})
		}
		t0 := time.Now()
		e.NewNodeSet(name, n)
		e.Eventually("scaled out", func() (bool, string) {
			return e.Get(name).Status.Replicas == n, ""
		})
		out += time.Since(t0)
		e.MarkAllReady()
		t1 := time.Now()
		e.PatchNodeSet(name, `{"spec":{"replicas":0}}`)
		e.Eventually("scaled in", func() (bool, string) {
			return len(e.Pods()) == 0 && e.Get(name).Status.Replicas == 0, fmt.Sprint(len(e.Pods()))
		})
		in += time.Since(t1)
		if err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		// Resume the drained Slurm nodes for the next round.
		for j := range n {
			_, _ = e.Slurm.Scontrol(e.Ctx, "update", fmt.Sprintf("nodename=%s-%d", name, j), "state=resume")
		}
	}
	b.ReportMetric(out.Seconds()/float64(b.N), "s/scale-out-20")
	b.ReportMetric(in.Seconds()/float64(b.N), "s/scale-in-20")
}
