package queue

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// metrics are the per-queue podgroup gauges of Volcano's queue controller,
// under the names and label Volcano exports them with
// (volcano_queue_pod_group_<phase>_count{queue_name}), so that dashboards
// and alerts written for Volcano work unchanged; plus a sync counter of our
// own that tests and benchmarks use to know when the controller has looked
// at every queue.
type metrics struct {
	inqueue, pending, running, unknown, completed *prometheus.GaugeVec
	syncs                                         prometheus.Counter
}

// volcanoSubsystem prefixes the metrics Volcano also exports, as Volcano's
// controllers name theirs; queueLabel is their per-queue label.
const (
	volcanoSubsystem = "volcano"
	queueLabel       = "queue_name"
)

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: volcanoSubsystem, Name: name, Help: help}, []string{queueLabel})
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
