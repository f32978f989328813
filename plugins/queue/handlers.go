package queue

// The queue informer's event handlers: which queues each change hands to
// the work queue (podgroups' changes hand on theirs in pgcounts.go).

import (
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

func (c *Controller) inCache(name string) bool {
	_, err := c.queues.Get(name)
	return err == nil
}

func (c *Controller) enqueueChildren(name string) {
	objs, err := c.queueIndex.ByIndex(byParentIndex, name)
	if err != nil {
		return
	}
	for _, o := range objs {
		c.wq.Add(o.(*v1beta1.Queue).Name)
	}
}

// enqueueAncestors syncs every queue above the named one (following
// parents through the cache, each queue once): when a parent changes, the
// queues of a cycle it closes or opens are exactly those.
func (c *Controller) enqueueAncestors(name string) {
	a, err := rules.WalkUp(name, func(n string) (*v1beta1.Queue, error) {
		q, err := c.queues.Get(n)
		if err != nil {
			return nil, nil // the walk ends at a queue not in the cache
		}
		return q, nil
	})
	if err != nil {
		return
	}
	for _, n := range a.Path[1:] {
		c.wq.Add(n)
	}
}

// addQueue syncs a new queue, the queues waiting for it as their parent,
// and, when it closes a parent cycle, the other queues of the cycle. A new
// queue changes nothing for the queues above it otherwise (a sync reads
// the queues above, never below): syncing them all for every queue added
// to a hierarchy 300 deep were 45 000 syncs, each walking up the
// hierarchy, and they delayed every other queue's Commands by seconds
// (test/hostile's hierarchy row; docs/security.md).
//
// A queue created after a Command that targets it goes to the Commands'
// lane.
func (c *Controller) addQueue(obj any) {
	q := obj.(*v1beta1.Queue)
	if len(c.pendingCommands(q.Name)) > 0 {
		c.fast.Add(q.Name)
	} else {
		c.wq.Add(q.Name)
	}
	c.enqueueChildren(q.Name)
	c.enqueueCycle(q.Name)
}

// enqueueCycle syncs the queues of the parent cycle the named queue is
// in, if it is in one.
func (c *Controller) enqueueCycle(name string) {
	a, err := rules.WalkUp(name, func(n string) (*v1beta1.Queue, error) {
		q, err := c.queues.Get(n)
		if err != nil {
			return nil, nil // the walk ends at a queue not in the cache
		}
		return q, nil
	})
	if err != nil || !a.InCycle() {
		return
	}
	for _, n := range a.Path[1:] {
		c.wq.Add(n)
	}
}

// updateQueue re-syncs a queue only when its parent changed, never for its
// own status writes (that would loop). A parent change may make or break a
// cycle: the queues above the old and the new parent are synced too. When
// its state changed, its children are synced, so that closing and opening
// propagate down the hierarchy once the cache shows the parent's new state.
func (c *Controller) updateQueue(oldObj, newObj any) {
	old, q := oldObj.(*v1beta1.Queue), newObj.(*v1beta1.Queue)
	if old.Spec.Parent != q.Spec.Parent || old.UID != q.UID {
		c.wq.Add(q.Name)
		c.enqueueAncestors(q.Name)
		if p := rules.EffectiveParent(old); p != "" {
			c.wq.Add(p)
			c.enqueueAncestors(p)
		}
	}
	if old.Status.State != q.Status.State {
		c.enqueueChildren(q.Name)
	}
}

func (c *Controller) deleteQueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	q, ok := obj.(*v1beta1.Queue)
	if !ok {
		return
	}
	c.metrics.delete(q.Name)
	c.mu.Lock()
	delete(c.written, q.Name)
	c.mu.Unlock()
	// Its children have lost their parent; a cycle through it is broken.
	c.enqueueChildren(q.Name)
	if p := rules.EffectiveParent(q); p != "" {
		c.wq.Add(p)
		c.enqueueAncestors(p)
	}
}
