package framework

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
)

// RunWorkers runs n workers that take keys from q and hand each to process,
// until stopCh closes; then it shuts q down and waits for the workers to
// finish the key in hand. The work queue guarantees that one key is never
// held by two workers at once, which is what lets each controller's sync
// function read-modify-write one object without locks.
func RunWorkers[T comparable](stopCh <-chan struct{}, q workqueue.TypedRateLimitingInterface[T], n int, process func(T)) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, quit := q.Get()
				if quit {
					return
				}
				func() {
					defer q.Done(key)
					process(key)
				}()
			}
		}()
	}
	<-stopCh
	q.ShutDown()
	wg.Wait()
}

// Requeue applies the retry policy to a failed sync of key: it is added back
// rate-limited while fewer than maxRequeue retries were made (maxRequeue < 0
// retries forever) and the function returns false; otherwise the key is
// forgotten and it returns true, so that the caller records the drop.
func Requeue[T comparable](q workqueue.TypedRateLimitingInterface[T], key T, maxRequeue int) (dropped bool) {
	if maxRequeue < 0 || q.NumRequeues(key) < maxRequeue {
		q.AddRateLimited(key)
		return false
	}
	q.Forget(key)
	return true
}
