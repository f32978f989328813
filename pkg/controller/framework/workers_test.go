package framework

import (
	"sync"
	"testing"

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
