package rules

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// HierarchyProblemAnnotation is set by the queue controller of 'kubectl vc
// serve' on a queue whose place in the hierarchy is broken, and removed once
// it is repaired. Its value is "<reason>: <detail>", the reason being that of
// the Warning event recorded with it (ParentCycle, ParentMissing). The CLI
// shows it in 'queue list', 'describe' and 'tree'. Volcano's CRDs have no
// conditions on a queue's status, so an annotation carries it.
const HierarchyProblemAnnotation = "kubectl-vc.io/hierarchy-problem"

// The reasons of a hierarchy problem.
const (
	// ParentCycle: following parents from the queue leads back to it.
	ParentCycle = "ParentCycle"
	// ParentMissing: the queue's parent does not exist.
	ParentMissing = "ParentMissing"
)

// HierarchyProblem is the value of HierarchyProblemAnnotation for a reason
// and its detail (the cycle, or the missing parent's name).
func HierarchyProblem(reason, detail string) string { return reason + ": " + detail }

// HierarchyProblemReason is the reason of a HierarchyProblemAnnotation
// value ("" when there is none).
func HierarchyProblemReason(value string) string {
	reason, _, _ := strings.Cut(value, ":")
	return strings.TrimSpace(reason)
}

// EffectiveParent is the parent a queue is treated as having: root has none
// (whatever its spec says), and any other queue without spec.parent is a
// child of root, which the queue controller then writes.
func EffectiveParent(q *v1beta1.Queue) string {
	switch {
	case q.Name == keys.RootQueue:
		return ""
	case q.Spec.Parent == "":
		return keys.RootQueue
	}
	return q.Spec.Parent
}

// NeedsDefaultParent says whether the queue controller writes root as q's
// parent: q is not root and names no parent (EffectiveParent is then root).
func NeedsDefaultParent(q *v1beta1.Queue) bool {
	return q.Name != keys.RootQueue && q.Spec.Parent == ""
}

// Lookup finds a queue by name. It returns nil, and no error, when there is
// no such queue.
type Lookup func(name string) (*v1beta1.Queue, error)

// MapLookup looks queues up in a map by name.
func MapLookup(queues map[string]*v1beta1.Queue) Lookup {
	return func(name string) (*v1beta1.Queue, error) { return queues[name], nil }
}

// Ancestry is where following spec.parent upward from a queue leads.
type Ancestry struct {
	// Path is every queue met, the start first, each once; it ends at
	// root, at the last queue before a missing one, or at the last queue
	// before the walk came back to one it had met.
	Path []string
	// Missing is the name of the first queue on the way that does not
	// exist ("" when none is missing). When it is the start's parent,
	// Path holds the start only.
	Missing string
	// Repeat is the first queue met a second time: the walk ran into a
	// parent cycle ("" when it did not).
	Repeat string
}

// InCycle tells whether the start queue itself is in a parent cycle (and
// not merely below one).
func (a Ancestry) InCycle() bool { return a.Repeat != "" && len(a.Path) > 0 && a.Repeat == a.Path[0] }

// Cycle returns the queues of the cycle the walk ran into, in parent order,
// beginning and ending with the same queue (a -> b -> a); nil when there
// is none.
func (a Ancestry) Cycle() []string {
	if a.Repeat == "" {
		return nil
	}
	for i, n := range a.Path {
		if n == a.Repeat {
			return append(append([]string(nil), a.Path[i:]...), a.Repeat)
		}
	}
	return nil
}

// FormatCycle writes a cycle as "a -> b -> a".
func FormatCycle(cycle []string) string { return strings.Join(cycle, " -> ") }

// WalkUp follows parents from the queue named start (which must exist):
// start, its parent, that queue's parent, and so on, until root, a queue
// that does not exist, or a queue met a second time. It reads every queue
// at most once, so it ends whatever the hierarchy looks like.
func WalkUp(start string, get Lookup) (Ancestry, error) {
	var a Ancestry
	seen := map[string]bool{}
	for name := start; name != ""; {
		if seen[name] {
			a.Repeat = name
			return a, nil
		}
		q, err := get(name)
		if err != nil {
			return a, err
		}
		if q == nil {
			if name == start {
				return a, fmt.Errorf("queue %q not found", start)
			}
			a.Missing = name
			return a, nil
		}
		seen[name] = true
		a.Path = append(a.Path, name)
		name = EffectiveParent(q)
	}
	return a, nil
}

// ChildrenOf returns the names of the queues whose parent (as
// EffectiveParent has it) is the named queue, sorted. A queue with none is
// a leaf: the only kind of queue Volcano's job admission lets a Job into.
func ChildrenOf(name string, queues []v1beta1.Queue) []string {
	var out []string
	for i := range queues {
		if queues[i].Name != name && EffectiveParent(&queues[i]) == name {
			out = append(out, queues[i].Name)
		}
	}
	sort.Strings(out)
	return out
}

// HoldsChildrenClosed tells whether a queue in this state keeps its child
// queues closed: a child cannot be opened under a Closed or Closing parent
// (the queue controller leaves its OpenQueue Command waiting, and 'queue
// open' refuses it up front).
func HoldsChildrenClosed(s v1beta1.QueueState) bool {
	return s == v1beta1.QueueStateClosed || s == v1beta1.QueueStateClosing
}
