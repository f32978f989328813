package rules

import (
	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// StateOrOpen is a queue state as Volcano treats it: an empty state is Open.
func StateOrOpen(s v1beta1.QueueState) v1beta1.QueueState {
	if s == "" {
		return v1beta1.QueueStateOpen
	}
	return s
}

// QueueIndexEntries is what the admission policies' QueueIndex must hold
// for these queues (docs/admission.md): the state of each queue that is not
// Open, and for each name other than root that queues have as their
// parent, how many do. Root's children are left out: no rule asks for them
// (root is never deleted and takes no Job), and a new top-level queue then
// changes nothing in the index. An Open queue without children has no
// entry, so the index grows with the closed queues and the parents, not
// with every queue.
func QueueIndexEntries(queues []*v1beta1.Queue) map[string]admissionv1alpha1.QueueIndexEntry {
	out := map[string]admissionv1alpha1.QueueIndexEntry{}
	for _, q := range queues {
		if s := StateOrOpen(q.Status.State); s != v1beta1.QueueStateOpen {
			e := out[q.Name]
			e.State = string(s)
			out[q.Name] = e
		}
		if p := EffectiveParent(q); p != "" && p != keys.RootQueue {
			e := out[p]
			e.Children++
			if e.Child == "" || q.Name < e.Child {
				e.Child = q.Name
			}
			out[p] = e
		}
	}
	return out
}
