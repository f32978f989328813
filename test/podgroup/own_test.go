package podgroup

import (
	"context"
	"io"
	"net/http"
	"path"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// ownCluster starts a cluster for the calling test alone, for tests that
// need the podgroup controller configured otherwise than the shared one
// (its flags, a watch held back), and points the package's helpers (env)
// at it until the test ends. It relies on the package's tests not running
// in parallel (none calls t.Parallel).
func ownCluster(t *testing.T, level controlplane.Level) *controlplane.ControlPlane {
	t.Helper()
	cp := cptest.StartLevel(t, level)
	saved := env
	cfg := cp.AdminConfig()
	env.kube = kubernetes.NewForConfigOrDie(cfg)
	env.vc = versioned.NewForConfigOrDie(cfg)
	t.Cleanup(func() { env = saved })
	return cp
}

// manager is an in-process manager running the podgroup controller alone.
type manager struct {
	metrics string
	stop    func()
}

// managerConfig is what a test's manager runs besides the podgroup
// controller.
type managerConfig struct {
	// wrap, when set, wraps the manager's transport (a watchGate).
	wrap func(http.RoundTripper) http.RoundTripper
	// queue runs the queue controller too, with its defaults, as serve
	// does by default: it makes the root and default queues and carries
	// out the Commands of 'kubectl vc queue open|close'.
	queue bool
}

// startManager runs the podgroup controller, configured by args as serve's
// flags configure it, against cp, with the package's --max-requeue-num and
// what mc adds. It returns once the caches are synced; the manager stops
// when the test ends or stop is called, and the test fails if it returns
// an error.
func startManager(t *testing.T, cp *controlplane.ControlPlane, mc managerConfig, args ...string) *manager {
	t.Helper()
	pg, err := framework.Configure("podgroup", args...)
	if err != nil {
		t.Fatal(err)
	}
	ctrls := []framework.Controller{pg}
	if mc.queue {
		q, err := framework.Configure("queue")
		if err != nil {
			t.Fatal(err)
		}
		ctrls = append(ctrls, q)
	}
	cfg := cp.AdminConfig()
	if mc.wrap != nil {
		cfg.Wrap(mc.wrap)
	}
	m := &manager{metrics: freeport.Addr(t)}
	health := freeport.Addr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Config{Kubeconfig: cfg,
			Controllers:   ctrls,
			MaxRequeueNum: maxRequeue,
			FeatureGates:  framework.NewFeatureGate(),
			MetricsAddr:   m.metrics,
			HealthAddr:    health,
			// stop returns only once the controllers have: one left
			// running would act on the next test's objects.
			WaitForStop: true,
		})
	}()
	var once sync.Once
	m.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(m.stop)
	eventually(t, "the manager ready (caches synced)", func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("manager returned before it was ready: %v", err)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+health+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return m
}

// metric is the sum of the manager's samples of a metric whose labels
// contain every fragment; found is false when there is none.
func (m *manager) metric(t *testing.T, name string, fragments ...string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + m.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	v, found, err := cptest.MetricSum(resp.Body, name, fragments...)
	if err != nil {
		t.Fatal(err)
	}
	return v, found
}

// metricIs waits until the metric's sum is want.
func (m *manager) metricIs(t *testing.T, want float64, name string, fragments ...string) {
	t.Helper()
	var got float64
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		got, _ = m.metric(t, name, fragments...)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("metric %s%v = %v, want %v", name, fragments, got, want)
	}
}

// watchGate holds back from the controller, while held, what the watch
// streams of one resource (e.g. "jobs") deliver: an event that arrives
// then waits in the stream until release, in order, as a slow watch would
// deliver it. Lists and other resources pass. It makes the order in which
// the controller sees two kinds of objects (a pod before its owner) a
// choice of the test rather than of chance.
type watchGate struct {
	resource string
	mu       sync.Mutex
	open     chan struct{} // closed while the gate is open
}

func newWatchGate(resource string) *watchGate {
	g := &watchGate{resource: resource, open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *watchGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default: // already held
	}
}

func (g *watchGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// wait blocks while the gate is held, or until done.
func (g *watchGate) wait(done <-chan struct{}) {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	select {
	case <-ch:
	case <-done:
	}
}

// wrap is a transport wrapper for rest.Config.Wrap.
func (g *watchGate) wrap(rt http.RoundTripper) http.RoundTripper {
	return gatedTransport{next: rt, gate: g}
}

type gatedTransport struct {
	next http.RoundTripper
	gate *watchGate
}

func (t gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || path.Base(req.URL.Path) != t.gate.resource {
		return resp, err
	}
	if w := req.URL.Query().Get("watch"); w != "true" && w != "1" {
		return resp, err
	}
	resp.Body = &gatedBody{ReadCloser: resp.Body, gate: t.gate, closed: make(chan struct{})}
	return resp, nil
}

// gatedBody waits for the gate after each read: what arrived while the
// gate was held is handed over only once it is released.
type gatedBody struct {
	io.ReadCloser
	gate   *watchGate
	once   sync.Once
	closed chan struct{}
}

func (b *gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.gate.wait(b.closed)
	return n, err
}

func (b *gatedBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}
