package rules

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The rules of a queue write that need the queues next to it: what serve's
// queue webhook answers in the index mode (docs/admission.md), and what the
// per-queue mode's policies vc-queue-children and vc-queue-delete-children
// say in CEL (the index mode's vc-queue-delete says the latter too, from
// the children index). The messages are the policies' own, so a user meets one text
// whichever mode the cluster runs.

// QueueNeighbours is what the rules read of the other queues: a queue by
// name (nil when there is none) and the queues whose effective parent is a
// name (any order).
type QueueNeighbours interface {
	Queue(name string) *v1beta1.Queue
	Children(parent string) []*v1beta1.Queue
}

// QueueWriteRelevant says whether a create (old nil) or an update can break
// a hierarchy rule. A create can when it names a parent other than root (a
// cycle of two) or sets a resource list (bounded by its parent, bounding
// any child named before it); a queue under root that sets none bounds
// nothing and is bounded by nothing, so the common `queue create NAME`
// needs no lookup. An update can when it moves the queue (its effective
// parent changes: the queue controller writing root where spec.parent was
// empty is no move) or changes a resource list; the queue controller's
// annotation patches and a new weight pass without a lookup. The webhook
// configuration's match condition (40-queue-hierarchy-webhook.yaml) says
// the same in CEL, so the API server does not call serve for the rest.
func QueueWriteRelevant(q, old *v1beta1.Queue) bool {
	if old == nil {
		p := EffectiveParent(q)
		return (p != "" && p != keys.RootQueue) ||
			len(q.Spec.Capability) > 0 || len(q.Spec.Deserved) > 0 || len(q.Spec.Guarantee.Resource) > 0
	}
	return EffectiveParent(q) != EffectiveParent(old) ||
		!equality.Semantic.DeepEqual(q.Spec.Capability, old.Spec.Capability) ||
		!equality.Semantic.DeepEqual(q.Spec.Deserved, old.Spec.Deserved) ||
		!equality.Semantic.DeepEqual(q.Spec.Guarantee.Resource, old.Spec.Guarantee.Resource)
}

// CheckQueueWrite checks a queue being created (old nil) or updated against
// its parent and its children:
//
//   - a new parent's own parent is not this queue (a cycle of two);
//   - per resource the parent sets, the queue's capability, deserved and
//     guarantee are at most the parent's (root bounds nothing);
//   - per resource the queue sets, they are at least each child's.
//
// A write that QueueWriteRelevant passes over is not checked.
func CheckQueueWrite(q, old *v1beta1.Queue, n QueueNeighbours) error {
	if !QueueWriteRelevant(q, old) {
		return nil
	}
	parent := EffectiveParent(q)
	var pq *v1beta1.Queue
	if parent != "" && parent != keys.RootQueue {
		pq = n.Queue(parent)
	}
	parentChanged := old == nil || q.Spec.Parent != old.Spec.Parent
	if pq != nil && parentChanged && EffectiveParent(pq) == q.Name {
		return fmt.Errorf("queue %s cannot have parent %s: the parent of %s is %s, which would make a cycle: pick another parent",
			q.Name, parent, parent, q.Name)
	}
	if pq != nil {
		var above []string
		for _, list := range []string{Capability, Deserved, Guarantee} {
			mine, theirs := ResourceList(&q.Spec, list), ResourceList(&pq.Spec, list)
			for _, r := range SortedNames(theirs) {
				if a, ok := mine[r]; ok {
					if b := theirs[r]; a.Cmp(b) > 0 {
						above = append(above, list+" "+string(r))
					}
				}
			}
		}
		if len(above) > 0 {
			return fmt.Errorf("queue %s exceeds its parent %s in %s: a queue may not have more than its parent; lower it or raise %s's",
				q.Name, parent, strings.Join(above, ", "), parent)
		}
	}
	if q.Name == keys.RootQueue {
		return nil // root bounds nothing: its resources are the cluster's
	}
	children := n.Children(q.Name)
	if len(children) == 0 {
		return nil
	}
	// The child named for each resource is the one that sets the most,
	// the first by name among equals, as the index held it.
	sort.Slice(children, func(i, j int) bool { return children[i].Name < children[j].Name })
	type below struct{ child, what string }
	var found []below
	for _, list := range []string{Capability, Deserved, Guarantee} {
		mine := ResourceList(&q.Spec, list)
		for _, r := range SortedNames(mine) {
			var most *v1beta1.Queue
			for _, c := range children {
				a, ok := ResourceList(&c.Spec, list)[r]
				if !ok {
					continue
				}
				if most == nil {
					most = c
					continue
				}
				if b := ResourceList(&most.Spec, list)[r]; a.Cmp(b) > 0 {
					most = c
				}
			}
			if most == nil {
				continue
			}
			if a := mine[r]; a.Cmp(ResourceList(&most.Spec, list)[r]) < 0 {
				found = append(found, below{most.Name, list + " " + string(r)})
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	whats, others := make([]string, len(found)), ""
	for i, b := range found {
		whats[i] = b.what
		if b.child != found[0].child {
			others = " (and other children)"
		}
	}
	return fmt.Errorf("queue %s is below its child %s in %s%s: a queue may not have less than its child; raise it or lower %s's",
		q.Name, found[0].child, strings.Join(whats, ", "), others, found[0].child)
}

// CheckQueueDelete checks the deletion of a queue: no queue has it as its
// parent. It is checked only for a deletion the state rules let through
// (a Closed queue other than root and default), so that a refusal
// has one message: an Open queue with children is first told to close.
func CheckQueueDelete(q *v1beta1.Queue, n QueueNeighbours) error {
	if q.Name == keys.RootQueue || q.Name == keys.DefaultQueue || q.Status.State != v1beta1.QueueStateClosed {
		return nil
	}
	children := n.Children(q.Name)
	if len(children) == 0 {
		return nil
	}
	first := children[0].Name
	for _, c := range children[1:] {
		first = min(first, c.Name)
	}
	more := ""
	if len(children) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(children)-1)
	}
	return fmt.Errorf("queue %s has child queue %s%s: delete it or move it to another parent first", q.Name, first, more)
}
