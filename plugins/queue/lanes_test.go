package queue

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// These tests drive the controller's two lanes (the work queue of every
// sync and the one of the queues Commands target) through Run, with the
// sync replaced by a recorder: what they test is which queue is synced
// when, not what a sync writes (sync_fake_test.go).

// syncRecorder stands in for the sync: it records the order in which the
// workers hand queues to it.
type syncRecorder struct {
	mu    sync.Mutex
	order []string
	all   chan struct{} // closed once want syncs were recorded
	want  int
}

func newSyncRecorder(want int) *syncRecorder {
	return &syncRecorder{all: make(chan struct{}), want: want}
}

func (r *syncRecorder) record(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.order = append(r.order, name)
	if len(r.order) == r.want {
		close(r.all)
	}
}

// runController runs the controller's workers until the test ends.
func runController(t *testing.T, c *Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// TestCommandServedBeforeBacklog: a queue a Command targets is synced
// while thousands of syncs queued before it still wait, however long they
// take: here the backlog's syncs do not even finish until it was. Before
// the Commands had a lane of their own, the Command's queue was queued
// behind the backlog (test/hostile: a close applied 2.2 s, up to 4 s,
// after it was issued, behind the syncs of a new queue hierarchy).
func TestCommandServedBeforeBacklog(t *testing.T) {
	f := newFakeQueueController(t)
	c := f.c
	c.workers = 1 // one worker per lane: the backlog is served strictly in order
	const backlog = 5000
	for i := range backlog {
		c.wq.Add(fmt.Sprintf("new-%d", i))
	}
	// The Command's arrival, as its informer tells it.
	c.addCommand(fakeCommand("close-it", "CloseQueue", "closing", "closing-uid", 1))
	if n := c.wq.Len(); n != backlog {
		t.Fatalf("the Command's queue waits in the work queue of every sync: %d queues there, %d of them queued before it", n, backlog)
	}

	rec := newSyncRecorder(backlog + 1)
	commandSynced := make(chan struct{})
	c.syncQueue = func(ctx context.Context, name string) error {
		rec.record(name)
		if name == "closing" {
			close(commandSynced)
			return nil
		}
		// A backlog sync lasts until the Command's queue was synced.
		select {
		case <-commandSynced:
		case <-ctx.Done():
		}
		return nil
	}
	runController(t, c)
	<-rec.all

	rec.mu.Lock()
	defer rec.mu.Unlock()
	at := slices.Index(rec.order, "closing")
	// The backlog's one worker takes its first queue, and waits there
	// until the Command's queue was synced.
	if at > 1 {
		t.Errorf("the Command's queue was synced %dth, after %d of the backlog's %d syncs", at+1, at, backlog)
	}
	for i := range backlog {
		if name := fmt.Sprintf("new-%d", i); !slices.Contains(rec.order, name) {
			t.Fatalf("queue %s of the backlog never synced", name)
		}
	}
}

// TestOneQueueSyncedOnceAtATime: a queue in both lanes is never synced by
// both at the same time (a close and an open of it would race).
func TestOneQueueSyncedOnceAtATime(t *testing.T) {
	f := newFakeQueueController(t)
	c := f.c
	c.workers = 4
	const queues = 300
	for i := range queues {
		c.wq.Add(fmt.Sprintf("q-%d", i))
		c.fast.Add(fmt.Sprintf("q-%d", i))
	}
	rec := newSyncRecorder(2 * queues)
	var mu sync.Mutex
	inSync := map[string]bool{}
	var overlaps []string
	c.syncQueue = func(_ context.Context, name string) error {
		mu.Lock()
		if inSync[name] {
			overlaps = append(overlaps, name)
		}
		inSync[name] = true
		mu.Unlock()
		runtime.Gosched() // leave the other lane the time to try the same queue
		mu.Lock()
		inSync[name] = false
		mu.Unlock()
		rec.record(name)
		return nil
	}
	runController(t, c)
	<-rec.all
	mu.Lock()
	defer mu.Unlock()
	if len(overlaps) > 0 {
		t.Errorf("queues synced by both lanes at once: %v", overlaps)
	}
}

// TestKeyLocks: a key's lock waits for its holder, and is forgotten once
// no one holds or waits for it.
func TestKeyLocks(t *testing.T) {
	var k keyLocks
	unlock := k.lock("a")
	other := k.lock("b") // another key does not wait
	other()
	took := make(chan struct{})
	go func() {
		defer close(took)
		k.lock("a")()
	}()
	// Wait until the goroutine waits for the lock.
	for {
		k.mu.Lock()
		users := k.held["a"].users
		k.mu.Unlock()
		if users == 2 {
			break
		}
		runtime.Gosched()
	}
	select {
	case <-took:
		t.Fatal("a second holder took the lock of a held key")
	default:
	}
	unlock()
	<-took
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.held) != 0 {
		t.Errorf("locks kept after use: %v", k.held)
	}
}

// TestQueueCreatedAfterItsCommand: a queue whose Command came first goes
// to the Commands' lane when it appears; any other new queue to the
// ordinary one.
func TestQueueCreatedAfterItsCommand(t *testing.T) {
	f := newFakeQueueController(t, fakeCommand("open-it", "OpenQueue", "late", "late-uid", 1))
	c := f.c
	c.addQueue(fakeQueue("late", "root", "", false))
	c.addQueue(fakeQueue("plain", "root", "", false))
	if c.fast.Len() != 1 || c.wq.Len() != 1 {
		t.Errorf("Commands' lane holds %d queues (want 1: late), the other %d (want 1: plain)", c.fast.Len(), c.wq.Len())
	}
}
