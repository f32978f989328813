package queue

import (
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// podGroupCounts is the queue controller's view of podgroups: for each
// podgroup (namespace/name) the queue and phase it is counted under, and
// for each queue its counts, kept up to date change by change.
//
// It is the cache.Store a Reflector fills (a list is a Replace, of
// podgrouprows.Rows or PodGroups; watch events are Add, Update and Delete
// of PodGroups), or the target of an informer's event handlers. Why not an informer's indexer: a sync then reads a queue's
// counts instead of walking its podgroups, and a podgroup costs a map entry
// of two strings (the queue name shared with its counts) instead of a
// whole PodGroup object with its key and index entries — at 10x (200 000
// podgroups) most of what serve keeps.
//
// Each change hands the queues whose counts it changed to changed (the
// work queue), never while holding the lock.
type podGroupCounts struct {
	changed func(queue string)
	synced  atomic.Bool

	mu      sync.RWMutex
	rows    map[string]pgRow
	byQueue map[string]*queueCounts
	rv      string // the newest resourceVersion seen (cache.Store)
}

type pgRow struct {
	queue string // the queue counted against: "" is the default queue
	phase v1beta1.PodGroupPhase
}

type queueCounts struct {
	name string // shared by every row of the queue
	n    rules.PodGroupCounts
}

func newPodGroupCounts(changed func(queue string)) *podGroupCounts {
	return &podGroupCounts{changed: changed, rows: map[string]pgRow{}, byQueue: map[string]*queueCounts{}}
}

// counts returns a queue's podgroup counts.
func (s *podGroupCounts) counts(queue string) rules.PodGroupCounts {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if qc := s.byQueue[queue]; qc != nil {
		return qc.n
	}
	return rules.PodGroupCounts{}
}

// hasSynced is true once the first full list has been stored.
func (s *podGroupCounts) hasSynced() bool { return s.synced.Load() }

func rowOf(obj any) (string, pgRow, error) {
	if r, ok := obj.(*podgrouprows.Row); ok {
		return r.Namespace + "/" + r.Name, pgRow{queue: rules.QueueOf(r.Queue), phase: knownPhase(r.Phase)}, nil
	}
	pg, err := podGroupOf(obj)
	if err != nil {
		return "", pgRow{}, err
	}
	return pg.Namespace + "/" + pg.Name, pgRow{queue: queueNameOf(pg), phase: knownPhase(pg.Status.Phase)}, nil
}

func podGroupOf(obj any) (*v1beta1.PodGroup, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pg, ok := obj.(*v1beta1.PodGroup)
	if !ok {
		return nil, fmt.Errorf("not a PodGroup: %T", obj)
	}
	return pg, nil
}

// seen records the resourceVersion of an object stored.
func (s *podGroupCounts) seen(obj any) {
	if pg, err := podGroupOf(obj); err == nil && pg.ResourceVersion != "" {
		s.Bookmark(pg.ResourceVersion)
	}
}

// knownPhase returns Volcano's constant for a phase it defines, so that
// the rows share five strings instead of one per decoded podgroup.
func knownPhase(p v1beta1.PodGroupPhase) v1beta1.PodGroupPhase {
	for _, k := range []v1beta1.PodGroupPhase{v1beta1.PodGroupPending, v1beta1.PodGroupRunning,
		v1beta1.PodGroupInqueue, v1beta1.PodGroupCompleted, v1beta1.PodGroupUnknown} {
		if p == k {
			return k
		}
	}
	return p
}

// count adds a row to its queue's counts and returns the row with the
// queue's shared name; the caller holds the lock.
func (s *podGroupCounts) count(r pgRow) pgRow {
	qc := s.byQueue[r.queue]
	if qc == nil {
		qc = &queueCounts{name: r.queue}
		s.byQueue[r.queue] = qc
	}
	qc.n.Add(r.phase)
	r.queue = qc.name
	return r
}

// uncount removes a row from its queue's counts; the caller holds the lock.
func (s *podGroupCounts) uncount(r pgRow) {
	if qc := s.byQueue[r.queue]; qc != nil {
		qc.n.Remove(r.phase)
		if qc.n.Total <= 0 {
			delete(s.byQueue, r.queue)
		}
	}
}

func (s *podGroupCounts) set(key string, r pgRow) {
	s.mu.Lock()
	old, had := s.rows[key]
	if had && old == r {
		s.mu.Unlock()
		return // counts cannot have changed
	}
	if had {
		s.uncount(old)
	}
	s.rows[key] = s.count(r)
	s.mu.Unlock()
	s.changed(r.queue)
	if had && old.queue != r.queue {
		s.changed(old.queue)
	}
}

func (s *podGroupCounts) remove(key string) {
	s.mu.Lock()
	old, had := s.rows[key]
	if had {
		s.uncount(old)
		delete(s.rows, key)
	}
	s.mu.Unlock()
	if had {
		s.changed(old.queue)
	}
}

// Add implements cache.Store.
func (s *podGroupCounts) Add(obj any) error {
	key, r, err := rowOf(obj)
	if err != nil {
		return err
	}
	s.set(key, r)
	s.seen(obj)
	return nil
}

// Update implements cache.Store.
func (s *podGroupCounts) Update(obj any) error { return s.Add(obj) }

// Delete implements cache.Store.
func (s *podGroupCounts) Delete(obj any) error {
	key, _, err := rowOf(obj)
	if err != nil {
		return err
	}
	s.remove(key)
	s.seen(obj)
	return nil
}

// Replace implements cache.Store: the rows become the list's, and every
// queue whose counts differ from before is handed on (at the first list:
// every queue with a podgroup).
func (s *podGroupCounts) Replace(list []any, rv string) error {
	next := &podGroupCounts{rows: make(map[string]pgRow, len(list)), byQueue: map[string]*queueCounts{}}
	for _, obj := range list {
		key, r, err := rowOf(obj)
		if err != nil {
			return err
		}
		if old, had := next.rows[key]; had {
			next.uncount(old)
		}
		next.rows[key] = next.count(r)
	}
	s.mu.Lock()
	var changed []string
	for q, qc := range next.byQueue {
		if old := s.byQueue[q]; old == nil || old.n != qc.n {
			changed = append(changed, q)
		}
	}
	for q := range s.byQueue {
		if next.byQueue[q] == nil {
			changed = append(changed, q)
		}
	}
	s.rows, s.byQueue, s.rv = next.rows, next.byQueue, rv
	s.mu.Unlock()
	s.synced.Store(true)
	for _, q := range changed {
		s.changed(q)
	}
	return nil
}

// LastStoreSyncResourceVersion implements cache.Store.
func (s *podGroupCounts) LastStoreSyncResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Bookmark implements cache.Store.
func (s *podGroupCounts) Bookmark(rv string) {
	s.mu.Lock()
	s.rv = rv
	s.mu.Unlock()
}

// Resync implements cache.Store: nothing to do, the counts are the rows'.
func (s *podGroupCounts) Resync() error { return nil }

// List implements cache.Store: the rows as podgroups holding only what
// is counted.
func (s *podGroupCounts) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, 0, len(s.rows))
	for key := range s.rows {
		out = append(out, s.podGroup(key))
	}
	return out
}

// ListKeys implements cache.Store.
func (s *podGroupCounts) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.rows))
	for key := range s.rows {
		out = append(out, key)
	}
	return out
}

// Get implements cache.Store.
func (s *podGroupCounts) Get(obj any) (any, bool, error) {
	key, _, err := rowOf(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(key)
}

// GetByKey implements cache.Store.
func (s *podGroupCounts) GetByKey(key string) (any, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.rows[key]; !ok {
		return nil, false, nil
	}
	return s.podGroup(key), true, nil
}

// podGroup rebuilds a row's podgroup; the caller holds the lock.
func (s *podGroupCounts) podGroup(key string) *v1beta1.PodGroup {
	r := s.rows[key]
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pg := &v1beta1.PodGroup{}
	pg.Namespace, pg.Name, pg.Spec.Queue, pg.Status.Phase = ns, name, r.queue, r.phase
	return pg
}

var _ cache.Store = (*podGroupCounts)(nil)
