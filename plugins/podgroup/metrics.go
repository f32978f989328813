package podgroup

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are what the podgroup controller does, under the volcano_
// prefix of Volcano's own metrics (volcano_podgroup_*). Volcano's podgroup
// controller exports none; these follow the naming of its queue metrics so
// that they sit next to them on a dashboard.
type metrics struct {
	created, updated, grouped prometheus.Counter
	dropped                   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, ungrouped func() int) (*metrics, error) {
	m := &metrics{
		created: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "volcano_podgroup_groups_created_total",
			Help: "PodGroups created by the podgroup controller.",
		}),
		updated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "volcano_podgroup_groups_updated_total",
			Help: "PodGroups patched by the podgroup controller to match their workload.",
		}),
		grouped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "volcano_podgroup_pods_grouped_total",
			Help: "Pods given the scheduling.k8s.io/group-name annotation by the podgroup controller.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "volcano_podgroup_requests_dropped_total",
			Help: "Requests of the podgroup controller given up after --max-requeue-num retries, by kind of object.",
		}, []string{"kind"}),
	}
	if reg == nil {
		return m, nil
	}
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "volcano_podgroup_ungrouped_pods",
		Help: "Live pods of the controller's schedulers that have no group yet.",
	}, func() float64 { return float64(ungrouped()) })
	for _, c := range []prometheus.Collector{m.created, m.updated, m.grouped, m.dropped, waiting} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ungroupedIndex indexes the pods the controller has still to group: live,
// of one of its schedulers, without a group-name. Normally there are few,
// so a queue that opens and the periodic resync look at these only.
const (
	ungroupedIndex = "podgroup.ungrouped"
	ungroupedValue = "ungrouped"
)
