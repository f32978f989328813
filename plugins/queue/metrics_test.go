package queue

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// TestMetricNames: the per-queue gauges are exported under Volcano's names
// and label, so dashboards built for Volcano's controller read ours, and a
// deleted queue's series go away.
func TestMetricNames(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.set("q1", rules.PodGroupCounts{Inqueue: 1, Pending: 2, Running: 3, Unknown: 4, Completed: 5})
	want := map[string]float64{
		"volcano_queue_pod_group_inqueue_count":   1,
		"volcano_queue_pod_group_pending_count":   2,
		"volcano_queue_pod_group_running_count":   3,
		"volcano_queue_pod_group_unknown_count":   4,
		"volcano_queue_pod_group_completed_count": 5,
	}
	gather := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() == "queue_controller_syncs_total" {
				continue // ours, not per queue
			}
			for _, s := range mf.GetMetric() {
				labels := s.GetLabel()
				if len(labels) != 1 || labels[0].GetName() != "queue_name" || labels[0].GetValue() != "q1" {
					t.Errorf("%s has labels %v, want only queue_name=\"q1\"", mf.GetName(), labels)
				}
				got[mf.GetName()] = s.GetGauge().GetValue()
			}
		}
		return got
	}
	got := gather()
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (present %t), want %v", name, g, ok, v)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected series %s", name)
		}
	}
	m.delete("q1")
	if got := gather(); len(got) != 0 {
		t.Fatalf("series left after the queue was deleted: %v", got)
	}
}
