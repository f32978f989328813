package framework

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
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
	stop := make(chan struct{})
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
		Retrying: func(string, error) { mu.Lock(); retries++; mu.Unlock() },
		Dropped: func(key string, _ error) {
			mu.Lock()
			drops++
			mu.Unlock()
			done <- struct{}{}
		},
	}
	ran := make(chan struct{})
	go func() { l.Run(stop); close(ran) }()
	q.Add("good")
	q.Add("bad")
	for range 2 {
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("the loop did not finish both keys")
		}
	}
	close(stop)
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
	stop := make(chan struct{})
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
		Retrying: func(key string, err error) {
			mu.Lock()
			defer mu.Unlock()
			retried = append(retried, key)
		},
	}
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		l.Run(stop)
	}()
	q.Add("fails")
	q.Add("stopped")
	<-started
	close(stop)
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
