package queue

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// metrics are the per-queue podgroup gauges of Volcano's queue controller,
// with the same names, plus a sync counter that tests and benchmarks use to
// know when the controller has looked at every queue.
type metrics struct {
	inqueue, pending, running, unknown, completed *prometheus.GaugeVec
	syncs                                         prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"queue_name"})
	}
	m := &metrics{
		inqueue:   gauge("queue_pod_group_inqueue_count", "Podgroups of the queue in phase Inqueue."),
		pending:   gauge("queue_pod_group_pending_count", "Podgroups of the queue in phase Pending."),
		running:   gauge("queue_pod_group_running_count", "Podgroups of the queue in phase Running."),
		unknown:   gauge("queue_pod_group_unknown_count", "Podgroups of the queue in phase Unknown."),
		completed: gauge("queue_pod_group_completed_count", "Podgroups of the queue in phase Completed."),
		syncs:     prometheus.NewCounter(prometheus.CounterOpts{Name: "queue_controller_syncs_total", Help: "Queue syncs completed without error."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.inqueue, m.pending, m.running, m.unknown, m.completed, m.syncs} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) set(queue string, c rules.PodGroupCounts) {
	m.inqueue.WithLabelValues(queue).Set(float64(c.Inqueue))
	m.pending.WithLabelValues(queue).Set(float64(c.Pending))
	m.running.WithLabelValues(queue).Set(float64(c.Running))
	m.unknown.WithLabelValues(queue).Set(float64(c.Unknown))
	m.completed.WithLabelValues(queue).Set(float64(c.Completed))
}

// delete removes a deleted queue's series, so /metrics does not report
// queues that no longer exist.
func (m *metrics) delete(queue string) {
	for _, g := range []*prometheus.GaugeVec{m.inqueue, m.pending, m.running, m.unknown, m.completed} {
		g.DeleteLabelValues(queue)
	}
}
