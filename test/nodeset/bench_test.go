package nodeset

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkScaleOutIn measures, end to end against the real API server and
// slurmctld, how long the controller takes to bring a NodeSet from 0 to 20
// pods (status reporting 20), and back to 0 through cordon → drain → delete
// of 20 idle Slurm nodes.
func BenchmarkScaleOutIn(b *testing.B) {
	const n = 20
	e := start(b, "bench", n)
	var out, in time.Duration
	for i := range b.N {
		name := "bench"
		if i > 0 {
			// Same name (the Slurm nodes are named after it); wait for the
			// previous round's NodeSet to be gone.
			e.eventually("previous NodeSet gone", func() (bool, string) {
				_, err := e.vc.SlinkyV1beta1().NodeSets(e.ns).Get(e.ctx, name, metav1.GetOptions{})
				return err != nil, ""
			})
		}
		t0 := time.Now()
		e.newNodeSet(name, n)
		e.eventually("scaled out", func() (bool, string) {
			return e.get(name).Status.Replicas == n, ""
		})
		out += time.Since(t0)
		e.markAllReady()
		t1 := time.Now()
		e.patchNodeSet(name, `{"spec":{"replicas":0}}`)
		e.eventually("scaled in", func() (bool, string) {
			return len(e.pods()) == 0 && e.get(name).Status.Replicas == 0, fmt.Sprint(len(e.pods()))
		})
		in += time.Since(t1)
		if err := e.vc.SlinkyV1beta1().NodeSets(e.ns).Delete(e.ctx, name, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		// Resume the drained Slurm nodes for the next round.
		for j := range n {
			_, _ = e.slurm.Scontrol(e.ctx, "update", fmt.Sprintf("nodename=%s-%d", name, j), "state=resume")
		}
	}
	b.ReportMetric(out.Seconds()/float64(b.N), "s/scale-out-20")
	b.ReportMetric(in.Seconds()/float64(b.N), "s/scale-in-20")
}
