package nodeset

import (
	"sync"
	"time"
)

// expectations remembers, per NodeSet, how many pod creations and deletions
// the controller has asked for but not yet seen through the pod informer.
//
// Why: the informer cache lags the API server. Right after creating three
// pods a second sync would still see the old pod count and create three
// more. While expectations are pending, a sync only refreshes status.
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
	adds, dels int
	since      time.Time
}

func newExpectations(timeout time.Duration) *expectations {
	return &expectations{timeout: timeout, now: time.Now, records: map[string]*expectation{}}
}

// expect raises the pending creations and deletions of key.
func (e *expectations) expect(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.records[key]
	if r == nil || (r.adds <= 0 && r.dels <= 0) {
		r = &expectation{}
		e.records[key] = r
	}
	r.adds += adds
	r.dels += dels
	r.since = e.now()
}

// creationObserved lowers the pending creations (informer add, or a failed create).
func (e *expectations) creationObserved(key string) { e.lower(key, 1, 0) }

// deletionObserved lowers the pending deletions (informer delete, or a failed delete).
func (e *expectations) deletionObserved(key string) { e.lower(key, 0, 1) }

func (e *expectations) lower(key string, adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r := e.records[key]; r != nil {
		// Events for pods created before this controller started (or by
		// someone else) also arrive here; never go below zero.
		r.adds = max(r.adds-adds, 0)
		r.dels = max(r.dels-dels, 0)
	}
}

// satisfied says whether the cache has caught up with our own writes for key.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.records[key]
	if r == nil || (r.adds <= 0 && r.dels <= 0) {
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
