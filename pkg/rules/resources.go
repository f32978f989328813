package rules

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The resource lists of a queue's spec, by the names the rules use.
const (
	Capability = "capability"
	Deserved   = "deserved"
	Guarantee  = "guarantee"
)

// FieldName names a resource list of the queue being checked in a message:
// the command line names its flags (--guarantee), others may name the
// field as it is.
type FieldName func(list string) string

// AsField names a list as it is (capability, deserved, guarantee).
func AsField(list string) string { return list }

// ResourceList returns one of a queue's resource lists by its rule name.
func ResourceList(spec *v1beta1.QueueSpec, list string) corev1.ResourceList {
	switch list {
	case Capability:
		return spec.Capability
	case Deserved:
		return spec.Deserved
	case Guarantee:
		return spec.Guarantee.Resource
	}
	return nil
}

// CheckQueueResources checks the resources of one queue against each
// other: for every resource, guarantee <= deserved <= capability (and so
// guarantee <= capability). A list that does not name a resource does not
// bound it: a queue without a capability for memory may deserve any amount
// of memory. The first broken rule is returned, resources in name order.
func CheckQueueResources(spec *v1beta1.QueueSpec, name FieldName) error {
	for _, pair := range [][2]string{{Guarantee, Deserved}, {Deserved, Capability}, {Guarantee, Capability}} {
		low, high := ResourceList(spec, pair[0]), ResourceList(spec, pair[1])
		for _, r := range SortedNames(low) {
			l := low[r]
			h, ok := high[r]
			if ok && l.Cmp(h) > 0 {
				return fmt.Errorf("%s %s exceeds %s %s: %s must be at least the %s",
					name(pair[0]), amount(r, l), name(pair[1]), amount(r, h), pair[1], pair[0])
			}
		}
	}
	return nil
}

// CheckQueueInHierarchy checks a queue's resources against the queues
// around it, as Volcano's admission does:
//
//   - its capability is at most that of its nearest ancestor that sets one,
//     per resource;
//   - with its siblings, its guarantee and its deserved share add up to at
//     most its parent's, for every resource the parent sets;
//   - as a parent: its capability is at least the capability of each queue
//     below it (per branch, the nearest that sets one), and its children's
//     guarantees and deserved shares add up to at most its own.
//
// q is the queue as it is to be written; queues holds the others (an entry
// of q's name is ignored). As in Volcano, the root queue bounds nothing and
// is bounded by nothing here: its resources are the cluster's.
func CheckQueueInHierarchy(q *v1beta1.Queue, queues map[string]*v1beta1.Queue, name FieldName) error {
	all := make(map[string]*v1beta1.Queue, len(queues)+1)
	for n, o := range queues {
		all[n] = o
	}
	all[q.Name] = q
	children := map[string][]*v1beta1.Queue{}
	for _, o := range all {
		if p := EffectiveParent(o); p != "" {
			children[p] = append(children[p], o)
		}
	}
	for _, c := range children {
		sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
	}

	parent := all[EffectiveParent(q)]
	if parent != nil && parent.Name != keys.RootQueue {
		if err := checkAncestorCapability(q, all, name); err != nil {
			return err
		}
		for _, list := range []string{Guarantee, Deserved} {
			// Only resources this queue adds to: a sum its siblings broke
			// already is not this queue's doing.
			if over := childrenOver(parent, children[parent.Name], list, ResourceList(&q.Spec, list)); over != nil {
				return fmt.Errorf("%s %s would make the %s of the children of queue %q add up to %s (%s), more than its %s %s: lower a child's or raise %s's",
					name(list), amount(over.r, ResourceList(&q.Spec, list)[over.r]), plural(list), parent.Name,
					amount(over.r, over.sum), strings.Join(over.who, ", "), list, amount(over.r, over.limit), parent.Name)
			}
		}
	}
	if q.Name == keys.RootQueue {
		return nil
	}
	for _, r := range SortedNames(q.Spec.Capability) {
		limit := q.Spec.Capability[r]
		for _, c := range children[q.Name] {
			if who, got, ok := subtreeCapability(c, r, children, map[string]bool{q.Name: true}); ok && got.Cmp(limit) > 0 {
				return fmt.Errorf("%s %s is below the capability %s of queue %q under it: a queue may not allow less than the queues below it",
					name(Capability), amount(r, limit), amount(r, got), who)
			}
		}
	}
	for _, list := range []string{Guarantee, Deserved} {
		if over := childrenOver(q, children[q.Name], list, nil); over != nil {
			return fmt.Errorf("%s %s is less than the %s of its children, %s in all (%s): raise it or lower theirs",
				name(list), amount(over.r, over.limit), plural(list), amount(over.r, over.sum), strings.Join(over.who, ", "))
		}
	}
	return nil
}

// checkAncestorCapability: per resource of q's capability, the nearest
// ancestor below root that sets a capability for it bounds it.
func checkAncestorCapability(q *v1beta1.Queue, all map[string]*v1beta1.Queue, name FieldName) error {
	for _, r := range SortedNames(q.Spec.Capability) {
		mine := q.Spec.Capability[r]
		seen := map[string]bool{q.Name: true}
		for p := all[EffectiveParent(q)]; p != nil && p.Name != keys.RootQueue && !seen[p.Name]; p = all[EffectiveParent(p)] {
			seen[p.Name] = true
			if limit, ok := p.Spec.Capability[r]; ok {
				if mine.Cmp(limit) > 0 {
					return fmt.Errorf("%s %s exceeds the capability %s of queue %q above it: a queue may not allow more than the queues above it",
						name(Capability), amount(r, mine), amount(r, limit), p.Name)
				}
				break
			}
		}
	}
	return nil
}

// subtreeCapability is the capability for r of the queue q, or, when q
// sets none, the largest among the queues below it (each branch's
// nearest that sets one), as Volcano's admission computes it.
func subtreeCapability(q *v1beta1.Queue, r corev1.ResourceName, children map[string][]*v1beta1.Queue, seen map[string]bool) (string, resource.Quantity, bool) {
	if seen[q.Name] {
		return "", resource.Quantity{}, false
	}
	seen[q.Name] = true
	if v, ok := q.Spec.Capability[r]; ok {
		return q.Name, v, true
	}
	var who string
	var best resource.Quantity
	found := false
	for _, c := range children[q.Name] {
		if n, v, ok := subtreeCapability(c, r, children, seen); ok && (!found || v.Cmp(best) > 0) {
			who, best, found = n, v, true
		}
	}
	return who, best, found
}

// overSum is a resource whose amounts over a parent's children add up to
// more than the parent's.
type overSum struct {
	r          corev1.ResourceName
	sum, limit resource.Quantity
	who        []string
}

// childrenOver: for every resource that parent's list sets, the children's
// amounts must add up to at most the parent's; the first that does not is
// returned. When only is not nil, only the resources it names are checked.
func childrenOver(parent *v1beta1.Queue, children []*v1beta1.Queue, list string, only corev1.ResourceList) *overSum {
	limits := ResourceList(&parent.Spec, list)
	for _, r := range SortedNames(limits) {
		if _, ok := only[r]; only != nil && !ok {
			continue
		}
		o := overSum{r: r, limit: limits[r]}
		for _, c := range children {
			if v, ok := ResourceList(&c.Spec, list)[r]; ok {
				o.sum.Add(v)
				o.who = append(o.who, c.Name)
			}
		}
		if o.sum.Cmp(o.limit) > 0 {
			return &o
		}
	}
	return nil
}

func plural(list string) string {
	if list == Deserved {
		return "deserved shares"
	}
	return list + "s"
}

func amount(r corev1.ResourceName, q resource.Quantity) string { return string(r) + "=" + q.String() }
