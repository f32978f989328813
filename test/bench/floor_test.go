package bench

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// Floor mode. Each throughput benchmark runs its fixture twice in the same
// run: once handled by serve's controller (in-process, default settings
// unless the benchmark says otherwise) and once by a bare client that
// makes only the writes the operation requires, floorConcurrency at once,
// reading nothing but the watch that tells it what to do. The floor is what
// this API server on this machine can do; serve/floor is what the
// controller's scheduling of those same writes costs.

// floorConcurrency is how many operations the floor has in flight: the same
// as the fixture's creators.
const floorConcurrency = 32

// methodCounter counts the requests sent through a config, by HTTP method.
type methodCounter struct {
	mu sync.Mutex
	n  map[string]float64
}

func newMethodCounter() *methodCounter { return &methodCounter{n: map[string]float64{}} }

// wrap returns a copy of cfg whose requests are counted.
func (c *methodCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingRT{next: rt, c: c} })
	return cfg
}

func (c *methodCounter) snapshot() map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]float64, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// settled returns the counts once writes stop moving: serve posts events
// asynchronously, and they belong to the run that caused them. Bounded: after
// 15 s the counts are taken as they are.
func (c *methodCounter) settled() map[string]float64 {
	prev := c.snapshot()
	for range 15 {
		time.Sleep(time.Second)
		cur := c.snapshot()
		same := true
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			same = same && prev[m] == cur[m]
		}
		if same {
			return cur
		}
		prev = cur
	}
	return prev
}

type countingRT struct {
	next http.RoundTripper
	c    *methodCounter
}

func (t countingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.mu.Lock()
	t.c.n[req.Method]++
	t.c.mu.Unlock()
	return t.next.RoundTrip(req)
}

// diff is after - before for the given methods.
func diff(before, after map[string]float64, methods ...string) float64 {
	var d float64
	for _, m := range methods {
		d += after[m] - before[m]
	}
	return d
}

// startController runs one of serve's controllers in-process, configured by
// flags exactly as 'serve' would configure it, and returns once its caches
// are synced. stop ends it and waits.
func startController(b *testing.B, cfg *rest.Config, name string, flags ...string) (stop func()) {
	b.Helper()
	c, err := framework.Configure(name, flags...)
	if err != nil {
		b.Fatal(err)
	}
	health := freeport.Addr(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Config{Kubeconfig: cfg,
			Controllers: []framework.Controller{c}, MaxRequeueNum: 15, HealthAddr: health, MetricsAddr: "0",
			WaitForStop: true, // stop returns once the controller has
		})
	}()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
	err = waitReady(health, done)
	if err != nil {
		stop()
		b.Fatal(err)
	}
	return stop
}

// waitReady waits until the controllers serving health are ready, or
// until exited says they stopped (the error is put back for the caller's
// stop to read).
func waitReady(health string, exited chan error) error {
	return wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			exited <- err
			return false, fmt.Errorf("stopped before it was ready: %v", err)
		default:
		}
		resp, err := http.Get("http://" + health + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// floorWorkers runs floorConcurrency goroutines taking items from work until
// ctx ends; each item is handed to do, and a failure is retried (an
// apiserver under this load may time a request out) up to five times.
func floorWorkers[T any](ctx context.Context, work <-chan T, do func(context.Context, T) error) (wait func() error) {
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for range floorConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case item := <-work:
					var err error
					for range 5 {
						if err = do(ctx, item); err == nil || ctx.Err() != nil {
							break
						}
					}
					if err != nil && ctx.Err() == nil {
						failed.CompareAndSwap(nil, &err)
					}
				}
			}
		}()
	}
	return func() error {
		wg.Wait()
		if e := failed.Load(); e != nil {
			return *e
		}
		return nil
	}
}

// informerFactory is what runFloor needs of a shared informer factory.
type informerFactory interface {
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
	Shutdown()
}

// runFloor starts a floor's informers and returns its stop: cancel the
// workers and the informers, wait for both, report a failed write.
func runFloor(b testing.TB, ctx context.Context, cancel context.CancelFunc, inf informerFactory, done func() error) (stop func()) {
	inf.Start(ctx.Done())
	inf.WaitForCacheSync(ctx.Done())
	return func() {
		cancel()
		inf.Shutdown()
		if err := done(); err != nil {
			b.Error("floor:", err)
		}
	}
}

// benchRounds is how many times each size of a floor benchmark runs its
// floor pass and its serve pass (VC_BENCH_ROUNDS, default 1). One pass of
// either varies from run to run on a loaded two-core machine, mostly with
// the API server and etcd (docs/benchmarks.md); several rounds and their
// medians say more than one.
func benchRounds() int { return envInt("VC_BENCH_ROUNDS", 1) }

// alternate runs rounds rounds of a floor pass and a serve pass, swapping
// which goes first in every other round, so that neither always meets the
// API server just after the other's cleanup.
func alternate[R any](b *testing.B, rounds int, floor, serve func() R) (floors, serves []R) {
	for i := range rounds {
		if i%2 == 0 {
			floors = append(floors, floor())
			serves = append(serves, serve())
		} else {
			serves = append(serves, serve())
			floors = append(floors, floor())
		}
		if b.Failed() {
			b.FailNow()
		}
	}
	return floors, serves
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianOf is the median of f over rs.
func medianOf[R any](rs []R, f func(R) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return median(xs)
}

// ratios are the rounds' serve/floor ratios of the times total gives.
func ratios[R any](floors, serves []R, total func(R) time.Duration) []float64 {
	out := make([]float64, len(serves))
	for i := range serves {
		out[i] = total(serves[i]).Seconds() / total(floors[i]).Seconds()
	}
	return out
}
