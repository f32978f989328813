package queue

// The queue hierarchy 'queue tree' and 'queue top' both draw: which queue
// hangs under which, the queues that cannot hang under root, and the order
// and indent of each row.

import (
	"fmt"
	"sort"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// forest is the queue hierarchy as 'queue tree' and 'queue top' show it:
// the tree under root, then the queues that cannot hang under root, each
// with its own subtree — those whose parent is missing, then every queue
// of a parent cycle.
type forest struct {
	byName   map[string]*schedulingv1beta1.Queue
	children map[string][]string
	// tops are the top-level groups in order: root (when it exists),
	// queues whose parent is missing, queues in a parent cycle.
	tops [3][]string
	// problem says, for a top-level queue other than root, what is wrong.
	problem map[string]string
}

func newForest(items []schedulingv1beta1.Queue) *forest {
	f := &forest{
		byName:   make(map[string]*schedulingv1beta1.Queue, len(items)),
		children: map[string][]string{},
		problem:  map[string]string{},
	}
	for i := range items {
		f.byName[items[i].Name] = &items[i]
	}
	inCycle := map[string]bool{}
	for name, q := range f.byName {
		if name == keys.RootQueue {
			f.tops[0] = append(f.tops[0], name)
			continue
		}
		if a, err := rules.WalkUp(name, rules.MapLookup(f.byName)); err == nil && a.InCycle() {
			f.problem[name] = "parent cycle " + rules.FormatCycle(a.Cycle())
			f.tops[2] = append(f.tops[2], name)
			inCycle[name] = true
			continue
		}
		if _, ok := f.byName[rules.EffectiveParent(q)]; !ok {
			f.problem[name] = fmt.Sprintf("parent %q missing", rules.EffectiveParent(q))
			f.tops[1] = append(f.tops[1], name)
		}
	}
	for name, q := range f.byName {
		if name != keys.RootQueue && !inCycle[name] {
			f.children[rules.EffectiveParent(q)] = append(f.children[rules.EffectiveParent(q)], name)
		}
	}
	return f
}

// sort orders siblings, and the queues of each top-level group, by less.
func (f *forest) sort(less func(a, b string) bool) {
	order := func(s []string) { sort.SliceStable(s, func(i, j int) bool { return less(s[i], s[j]) }) }
	for _, c := range f.children {
		sort.Strings(c)
		order(c)
	}
	for _, t := range f.tops {
		sort.Strings(t)
		order(t)
	}
}

// parent is the queue a row hangs under in the forest: "" for a
// top-level queue.
func (f *forest) parent(name string) string {
	if name == keys.RootQueue || f.problem[name] != "" {
		return ""
	}
	return rules.EffectiveParent(f.byName[name])
}

// walk visits every queue depth first in order, with the label of what
// is wrong (top-level queues only) and the indent drawn before its name
// ("│   ├── ").
func (f *forest) walk(visit func(name, label, indent string)) {
	var rec func(name, prefix, branch string)
	rec = func(name, prefix, branch string) {
		label := ""
		if p := f.problem[name]; p != "" {
			label = " (" + p + ")"
		}
		visit(name, label, prefix+branch)
		next := prefix
		switch branch {
		case "├── ":
			next += "│   "
		case "└── ":
			next += "    "
		}
		kids := f.children[name]
		for i, k := range kids {
			b := "├── "
			if i == len(kids)-1 {
				b = "└── "
			}
			rec(k, next, b)
		}
	}
	for _, group := range f.tops {
		for _, name := range group {
			rec(name, "", "")
		}
	}
}
