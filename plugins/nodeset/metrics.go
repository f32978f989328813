package nodeset

import (
	"github.com/prometheus/client_golang/prometheus"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// metrics are the NodeSet controller's, named volcano_nodeset_* like the
// rest of serve's (Volcano's own controllers prefix theirs volcano_):
// per NodeSet, its replicas as in status and by the state of their Slurm
// nodes; and counters of what the controller did.
type metrics struct {
	replicas    *prometheus.GaugeVec // namespace, nodeset, status
	slurmStates *prometheus.GaugeVec // namespace, nodeset, state
	syncs       prometheus.Counter
	slurmErrors prometheus.Counter
	created     prometheus.Counter
	deleted     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		replicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "volcano_nodeset_replicas",
			Help: "Pods of the NodeSet by status: desired, current (not terminating), ready, available, unavailable, updated."},
			[]string{"namespace", "nodeset", "status"}),
		slurmStates: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "volcano_nodeset_replicas_by_slurm_state",
			Help: "Pods of the NodeSet by the state of their Slurm node: idle, allocated (or mixed), down; drain counts the DRAIN flag."},
			[]string{"namespace", "nodeset", "state"}),
		syncs: prometheus.NewCounter(prometheus.CounterOpts{Name: "volcano_nodeset_controller_syncs_total",
			Help: "NodeSet syncs completed without error."}),
		slurmErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "volcano_nodeset_slurm_refresh_failures_total",
			Help: "NodeSet syncs stopped because Slurm's node states could not be read."}),
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "volcano_nodeset_pods_created_total",
			Help: "Pods created by the NodeSet controller."}),
		deleted: prometheus.NewCounter(prometheus.CounterOpts{Name: "volcano_nodeset_pods_deleted_total",
			Help: "Pods deleted by the NodeSet controller (drained in Slurm first, or finished)."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.replicas, m.slurmStates, m.syncs, m.slurmErrors, m.created, m.deleted} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// set records a NodeSet's status.
func (m *metrics) set(namespace, name string, st slinkyv1beta1.NodeSetStatus) {
	for status, v := range map[string]int32{
		"desired": st.Desired, "current": st.Replicas, "ready": st.ReadyReplicas, "available": st.AvailableReplicas,
		"unavailable": st.UnavailableReplicas, "updated": st.UpdatedReplicas,
	} {
		m.replicas.WithLabelValues(namespace, name, status).Set(float64(v))
	}
	for state, v := range map[string]int32{
		"idle": st.SlurmIdle, "allocated": st.SlurmAllocated, "down": st.SlurmDown, "drain": st.SlurmDrain,
	} {
		m.slurmStates.WithLabelValues(namespace, name, state).Set(float64(v))
	}
}

// delete drops a deleted NodeSet's series, so /metrics does not report
// NodeSets that no longer exist.
func (m *metrics) delete(namespace, name string) {
	labels := prometheus.Labels{"namespace": namespace, "nodeset": name}
	m.replicas.DeletePartialMatch(labels)
	m.slurmStates.DeletePartialMatch(labels)
}
