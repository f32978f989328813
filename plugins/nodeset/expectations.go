package nodeset

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// expectations remembers, per NodeSet, the pod creations and deletions the
// controller has asked for but not yet seen through the pod informer.
//
// Why: the informer cache lags the API server. Right after creating three
// pods a second sync would still see the old pod count and create three
// more. While expectations are pending, a sync only refreshes status.
//
// Creations are counted. Deletions are tracked by pod UID and count as seen
// as soon as the informer shows the pod with a deletionTimestamp, as the
// Kubernetes workload controllers do: a pod with a long grace period (or a
// finalizer) is still listed, and handled as terminating, so there is no
// need to wait for it to be gone; waiting would freeze the NodeSet (scale
// out, cordons, updates) for as long as it terminates.
//
// A record expires after timeout so that a lost watch event (or a create
// that the API server accepted but whose event never came) cannot wedge a
// NodeSet forever; the next sync then recounts from the cache.
type expectations struct {
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	records map[string]*expectation
}

type expectation struct {
	adds  int
	dels  map[types.UID]bool
	since time.Time
}

func (r *expectation) pending() bool { return r.adds > 0 || len(r.dels) > 0 }

func newExpectations(timeout time.Duration) *expectations {
	return &expectations{timeout: timeout, now: time.Now, records: map[string]*expectation{}}
}

// record returns key's record, a fresh one if there is none or the old one
// is fulfilled. Call with e.mu held.
func (e *expectations) record(key string) *expectation {
	r := e.records[key]
	if r == nil || !r.pending() {
		r = &expectation{dels: map[types.UID]bool{}}
		e.records[key] = r
	}
	r.since = e.now()
	return r
}

// expectCreations raises the pending creations of key.
func (e *expectations) expectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.record(key).adds += n
}

// expectDeletion records that the pod uid is being deleted.
func (e *expectations) expectDeletion(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.record(key).dels[uid] = true
}

// CreationObserved lowers the pending creations (informer add, or a failed
// create). Events for pods created before this controller started (or by
// someone else) also arrive here; the count never goes below zero.
func (e *expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		r.adds = max(r.adds-1, 0)
	}
}

// DeletionObserved marks the deletion of pod uid as seen (the informer
// shows it terminating or gone, or the delete failed). Seeing it twice is
// harmless.
func (e *expectations) DeletionObserved(key string, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		delete(r.dels, uid)
	}
}

// satisfied says whether the cache has caught up with our own writes for key.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.records[key]
	if r == nil || !r.pending() {
		return true
	}
	if e.now().Sub(r.since) > e.timeout {
		delete(e.records, key)
		return true
	}
	return false
}

// forget drops key's record; used when its NodeSet is gone.
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.records, key)
}

// has says whether any record (even a satisfied one) exists for key.
func (e *expectations) has(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.records[key]
	return ok
}
