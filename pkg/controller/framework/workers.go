package framework

import (
	"context"
	"sync"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
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

// Loop is the work loop of every controller: Workers goroutines take keys
// from Queue and hand each to Sync with a context that ends when the
// controller stops, and whose logger (the controller's, named by the
// manager) carries the key (KeyValues): every line a sync logs says which
// controller and which object it is about, without each call site adding
// it. A key whose sync succeeds is forgotten by the rate limiter; a failed
// one is added back rate-limited while fewer than MaxRequeue retries were
// made (MaxRequeue < 0 retries forever), and is then dropped. A controller
// supplies only Sync and, to log or record an event, Retrying and Dropped.
type Loop[T comparable] struct {
	Queue      workqueue.TypedRateLimitingInterface[T]
	Workers    int
	MaxRequeue int
	// Sync brings the object of key to its desired state.
	Sync func(ctx context.Context, key T) error
	// KeyValues, when set, are the logger's key/value pairs naming key's
	// object; by default "object" and, for a string key, the reference
	// its namespace/name makes (klog.KRef), else the key itself.
	KeyValues func(key T) []any
	// Retrying, when set, is told of a failed sync that will be retried;
	// ctx's logger carries the key, as the sync's did.
	Retrying func(ctx context.Context, key T, err error)
	// Dropped, when set, is told of a key given up after MaxRequeue
	// retries: the controller records why on the object (a Warning event),
	// since nothing retries it until the object changes again.
	Dropped func(ctx context.Context, key T, err error)
}

// Run runs the workers until ctx ends, then shuts the queue down and
// waits for the keys in hand.
func (l Loop[T]) Run(ctx context.Context) {
	RunWorkers(ctx.Done(), l.Queue, l.Workers, func(key T) { l.process(ctx, key) })
}

// keyValues names key's object for the logger.
func (l Loop[T]) keyValues(key T) []any {
	if l.KeyValues != nil {
		return l.KeyValues(key)
	}
	if s, ok := any(key).(string); ok {
		if ns, name, err := cache.SplitMetaNamespaceKey(s); err == nil {
			return []any{"object", klog.KRef(ns, name)}
		}
	}
	return []any{"object", key}
}

// process syncs one key and applies the retry policy to a failure. A sync
// cut short because the controller is stopping is neither retried nor
// reported: the queue is shutting down, and whoever runs the controllers
// next starts from the API server's state (the syncs are level-triggered),
// so an error line for each key in hand on every clean stop would only
// alarm.
func (l Loop[T]) process(ctx context.Context, key T) {
	ctx = klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), l.keyValues(key)...))
	err := l.Sync(ctx, key)
	if err == nil {
		l.Queue.Forget(key)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if !Requeue(l.Queue, key, l.MaxRequeue) {
		if l.Retrying != nil {
			l.Retrying(ctx, key, err)
		}
		return
	}
	if l.Dropped != nil {
		l.Dropped(ctx, key, err)
	}
}
