package framework

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

func newQueue() workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](0, 0))
}

// TestRequeueLimit: a key is retried maxRequeue times, then dropped and
// forgotten; a negative limit retries forever.
func TestRequeueLimit(t *testing.T) {
	q := newQueue()
	defer q.ShutDown()
	for i := 0; i < 3; i++ {
		if Requeue(q, "k", 3) {
			t.Fatalf("dropped after %d retries, limit 3", i)
		}
	}
	if !Requeue(q, "k", 3) {
		t.Fatal("not dropped after 3 retries")
	}
	if q.NumRequeues("k") != 0 {
		t.Errorf("a dropped key keeps %d requeues", q.NumRequeues("k"))
	}
	for i := 0; i < 50; i++ {
		if Requeue(q, "forever", -1) {
			t.Fatal("maxRequeue -1 dropped a key")
		}
	}
}

// TestRunWorkersProcessesEachKeyAndStops: every key is processed, a key is
// never held by two workers at once, and RunWorkers returns on stop.
func TestRunWorkersProcessesEachKeyAndStops(t *testing.T) {
	q := newQueue()
	var mu sync.Mutex
	inFlight, seen := map[string]bool{}, map[string]int{}
	done := make(chan struct{})
	stop := make(chan struct{})
	const keys = 100
	for i := 0; i < keys; i++ {
		q.Add(string(rune('a'+i%26)) + string(rune('0'+i/26)))
	}
	returned := make(chan struct{})
	var finish sync.Once
	go func() {
		defer close(returned)
		RunWorkers(stop, q, 4, func(k string) {
			mu.Lock()
			if inFlight[k] {
				t.Errorf("key %s processed by two workers at once", k)
			}
			inFlight[k] = true
			seen[k]++
			n := len(seen)
			mu.Unlock()
			// Re-adding while in flight must not run it concurrently.
			q.Add(k)
			mu.Lock()
			inFlight[k] = false
			mu.Unlock()
			if n == keys {
				// Several workers may see the last key counted; one closes.
				finish.Do(func() { close(done) })
			}
		})
	}()
	<-done
	close(stop)
	<-returned // RunWorkers returns once stopped, with the queue shut down
	if !q.ShuttingDown() {
		t.Error("queue still open after stop")
	}
}

// TestLoopRetriesThenDrops: a key that keeps failing is synced 1 +
// MaxRequeue times, reported as retrying each time but the last and then
// dropped once; a key that succeeds is forgotten; the sync's context ends
// when the loop stops.
func TestLoopRetriesThenDrops(t *testing.T) {
	q := newQueue()
	ctx, stop := context.WithCancel(context.Background())
	var mu sync.Mutex
	syncs := map[string]int{}
	retries, drops := 0, 0
	var syncCtx context.Context
	done := make(chan struct{}, 2)
	l := Loop[string]{
		Queue: q, Workers: 2, MaxRequeue: 3,
		Sync: func(ctx context.Context, key string) error {
			mu.Lock()
			defer mu.Unlock()
			syncs[key]++
			syncCtx = ctx
			if key == "bad" {
				return errors.New("always fails")
			}
			done <- struct{}{}
			return nil
		},
		Retrying: func(context.Context, string, error) { mu.Lock(); retries++; mu.Unlock() },
		Dropped: func(_ context.Context, key string, _ error) {
			mu.Lock()
			drops++
			mu.Unlock()
			done <- struct{}{}
		},
	}
	ran := make(chan struct{})
	go func() { l.Run(ctx); close(ran) }()
	q.Add("good")
	q.Add("bad")
	for range 2 {
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("the loop did not finish both keys")
		}
	}
	stop()
	<-ran
	mu.Lock()
	defer mu.Unlock()
	if syncs["good"] != 1 || syncs["bad"] != 4 || retries != 3 || drops != 1 {
		t.Errorf("syncs %v, retries %d, drops %d; want good 1, bad 4, 3 retries, 1 drop", syncs, retries, drops)
	}
	if q.NumRequeues("good") != 0 || q.NumRequeues("bad") != 0 {
		t.Errorf("keys not forgotten: good %d, bad %d", q.NumRequeues("good"), q.NumRequeues("bad"))
	}
	if syncCtx.Err() == nil {
		t.Error("the sync context is still live after the loop stopped")
	}
}

// TestLoopStopIsNotAFailure: a sync that fails because the controller is
// stopping (its context ended) is not reported as a retry, while a sync
// that fails in a running controller is.
func TestLoopStopIsNotAFailure(t *testing.T) {
	q := newQueue()
	ctx, stop := context.WithCancel(context.Background())
	started := make(chan struct{})
	var mu sync.Mutex
	var retried []string
	l := Loop[string]{Queue: q, Workers: 1, MaxRequeue: -1,
		Sync: func(ctx context.Context, key string) error {
			if key == "fails" {
				return errors.New("refused")
			}
			close(started)
			<-ctx.Done()
			return ctx.Err()
		},
		Retrying: func(_ context.Context, key string, err error) {
			mu.Lock()
			defer mu.Unlock()
			retried = append(retried, key)
		},
	}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		l.Run(ctx)
	}()
	q.Add("fails")
	q.Add("stopped")
	<-started
	stop()
	<-returned
	mu.Lock()
	defer mu.Unlock()
	if len(retried) == 0 || retried[0] != "fails" {
		t.Fatalf("retries reported %v: the failure of a running controller must be reported", retried)
	}
	for _, k := range retried {
		if k == "stopped" {
			t.Fatalf("retries reported %v: a sync ended by the stop is not a failure", retried)
		}
	}
}

// TestLoopLoggerNamesTheObject: every line a sync logs, and the retry
// report, carry the controller's name and the object's key once, without
// the sync adding them; a controller's own KeyValues replace the default.
func TestLoopLoggerNamesTheObject(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{})
	ctx, stop := context.WithCancel(klog.NewContext(context.Background(), klog.LoggerWithName(logger, "nodeset")))
	defer stop()
	done := make(chan struct{}, 4)
	run := func(l Loop[string], key string) {
		q := newQueue()
		l.Queue, l.Workers, l.MaxRequeue = q, 1, 0
		l.Sync = func(ctx context.Context, key string) error {
			klog.FromContext(ctx).Info("synced")
			return errors.New("refused")
		}
		l.Dropped = func(ctx context.Context, _ string, err error) {
			klog.FromContext(ctx).Error(err, "dropped")
			done <- struct{}{}
		}
		lctx, lstop := context.WithCancel(ctx)
		ran := make(chan struct{})
		go func() { l.Run(lctx); close(ran) }()
		q.Add(key)
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("the key was not dropped")
		}
		lstop()
		<-ran
	}
	run(Loop[string]{}, "slurm/compute")
	run(Loop[string]{KeyValues: func(k string) []any { return []any{"queue", k} }}, "research")
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`nodeset "level"=0 "msg"="synced" "object"={"name"="compute" "namespace"="slurm"}`,
		`nodeset "msg"="dropped" "error"="refused" "object"={"name"="compute" "namespace"="slurm"}`,
		`nodeset "level"=0 "msg"="synced" "queue"="research"`,
		`nodeset "msg"="dropped" "error"="refused" "queue"="research"`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
