package controller

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// requestCounter counts the API requests of the process by method and status
// code. Writes are every method but GET, so this is how tests and benchmarks
// see "API writes per operation" without an audit log.
type requestCounter struct {
	next  http.RoundTripper
	total *prometheus.CounterVec
}

func newRequestCounterVec() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Requests to the Kubernetes API server, by HTTP method and status code.",
	}, []string{"method", "code"})
}

func (r *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	code := "<error>"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	r.total.WithLabelValues(req.Method, code).Inc()
	return resp, err
}

// workqueueMetrics implements client-go's workqueue.MetricsProvider on our
// own registry. It is handed to each work queue through its config rather
// than set process-wide, so several managers in one test binary stay apart.
type workqueueMetrics struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, duration          *prometheus.HistogramVec
}

func newWorkqueueMetrics(reg prometheus.Registerer) *workqueueMetrics {
	l := []string{"name"}
	m := &workqueueMetrics{
		depth:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "Current depth of the work queue."}, l),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_unfinished_work_seconds", Help: "Seconds of work in progress not yet observed by work_duration."}, l),
		longest:    prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "workqueue_longest_running_processor_seconds", Help: "Seconds the longest running processor has been running."}, l),
		adds:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_adds_total", Help: "Adds handled by the work queue."}, l),
		retries:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "workqueue_retries_total", Help: "Retries handled by the work queue."}, l),
		latency:    prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_queue_duration_seconds", Help: "Seconds an item waits in the queue before being processed.", Buckets: prometheus.ExponentialBuckets(1e-6, 10, 10)}, l),
		duration:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "workqueue_work_duration_seconds", Help: "Seconds processing an item takes.", Buckets: prometheus.ExponentialBuckets(1e-6, 10, 10)}, l),
	}
	reg.MustRegister(m.depth, m.unfinished, m.longest, m.adds, m.retries, m.latency, m.duration)
	return m
}

func (m *workqueueMetrics) NewDepthMetric(n string) workqueue.GaugeMetric {
	return m.depth.WithLabelValues(n)
}
func (m *workqueueMetrics) NewAddsMetric(n string) workqueue.CounterMetric {
	return m.adds.WithLabelValues(n)
}
func (m *workqueueMetrics) NewLatencyMetric(n string) workqueue.HistogramMetric {
	return m.latency.WithLabelValues(n)
}
func (m *workqueueMetrics) NewWorkDurationMetric(n string) workqueue.HistogramMetric {
	return m.duration.WithLabelValues(n)
}
func (m *workqueueMetrics) NewUnfinishedWorkSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return m.unfinished.WithLabelValues(n)
}
func (m *workqueueMetrics) NewLongestRunningProcessorSecondsMetric(n string) workqueue.SettableGaugeMetric {
	return m.longest.WithLabelValues(n)
}
func (m *workqueueMetrics) NewRetriesMetric(n string) workqueue.CounterMetric {
	return m.retries.WithLabelValues(n)
}
