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

// QueueIndexes splits QueueIndexEntries into the QueueIndexes
// (admissionv1alpha1.QueueIndexNames), each holding the fields its
// policies read, and only the entries that have any.
func QueueIndexes(queues []*v1beta1.Queue) map[string]map[string]admissionv1alpha1.QueueIndexEntry {
	out := map[string]map[string]admissionv1alpha1.QueueIndexEntry{}
	for _, n := range admissionv1alpha1.QueueIndexNames {
		out[n] = map[string]admissionv1alpha1.QueueIndexEntry{}
	}
	for name, e := range QueueIndexEntries(queues) {
		if e.State != "" {
			out[admissionv1alpha1.QueueIndexStates][name] = admissionv1alpha1.QueueIndexEntry{State: e.State}
		}
		// A Job create checks both its queue's state and its children in
		// one evaluation of one index.
		out[admissionv1alpha1.QueueIndexJobs][name] = e
		// A queue delete asks only whether the queue has children.
		if e.Children > 0 {
			out[admissionv1alpha1.QueueIndexChildren][name] = admissionv1alpha1.QueueIndexEntry{Children: e.Children, Child: e.Child}
		}
	}
	return out
}

// QueueIndexEntries is what the admission policies' QueueIndexes must hold
// for these queues (docs/admission.md): for each queue, its state when it
// is not Open; for each name other than root that queues have as their
// parent, how many do, and the first of them by name. Root's children are
// left out: no rule asks for them (root takes no Job), and a new top-level
// queue then changes nothing in the index. An entry that would be empty is
// left out, so the index grows with the closed queues and the parents, not
// with every queue.
func QueueIndexEntries(queues []*v1beta1.Queue) map[string]admissionv1alpha1.QueueIndexEntry {
	out := map[string]admissionv1alpha1.QueueIndexEntry{}
	for _, q := range queues {
		if s := StateOrOpen(q.Status.State); s != v1beta1.QueueStateOpen {
			e := out[q.Name]
			e.State = string(s)
			out[q.Name] = e
		}
		p := EffectiveParent(q)
		if p == "" || p == keys.RootQueue {
			continue
		}
		pe := out[p]
		pe.Children++
		if pe.Child == "" || q.Name < pe.Child {
			pe.Child = q.Name
		}
		out[p] = pe
	}
	return out
}
