package rules

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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

// QueueIndexes splits QueueIndexEntries into the four QueueIndexes
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
		if e.Children > 0 {
			out[admissionv1alpha1.QueueIndexChildren][name] = admissionv1alpha1.QueueIndexEntry{Children: e.Children, Child: e.Child}
		}
		// A Job create checks both its queue's state and its children in
		// one evaluation of one index.
		if e.Children > 0 || e.State != "" {
			out[admissionv1alpha1.QueueIndexJobs][name] = admissionv1alpha1.QueueIndexEntry{State: e.State, Children: e.Children, Child: e.Child}
		}
		h := e
		h.State, h.Children, h.Child = "", 0, ""
		if h.Parent != "" || len(h.Capability)+len(h.Deserved)+len(h.Guarantee)+len(h.ChildCapability)+len(h.ChildDeserved)+len(h.ChildGuarantee) > 0 {
			out[admissionv1alpha1.QueueIndexHierarchy][name] = h
		}
	}
	return out
}

// QueueIndexEntries is what the admission policies' QueueIndex must hold
// for these queues (docs/admission.md): for each queue, its state when it
// is not Open, its parent when that is not root, and its resource lists;
// for each name other than root that queues have as their parent, how many
// do, and per resource the largest amount they set. Root's children are
// left out: no rule asks for them (root is never deleted, takes no Job and
// bounds nothing), and a new top-level queue without resources then changes
// nothing in the index. An entry that would be empty is left out, so the
// index grows with the closed queues, the hierarchy and the queues that
// set resources, not with every queue.
func QueueIndexEntries(queues []*v1beta1.Queue) map[string]admissionv1alpha1.QueueIndexEntry {
	out := map[string]admissionv1alpha1.QueueIndexEntry{}
	maxes := map[string]*[3]largest{} // per parent: capability, deserved, guarantee
	for _, q := range queues {
		e := out[q.Name]
		if s := StateOrOpen(q.Status.State); s != v1beta1.QueueStateOpen {
			e.State = string(s)
		}
		p := EffectiveParent(q)
		if p != "" && p != keys.RootQueue {
			e.Parent = p
		}
		e.Capability = amounts(q.Spec.Capability)
		e.Deserved = amounts(q.Spec.Deserved)
		e.Guarantee = amounts(q.Spec.Guarantee.Resource)
		if !emptyEntry(e) {
			out[q.Name] = e
		}
		if p == "" || p == keys.RootQueue {
			continue
		}
		pe := out[p]
		pe.Children++
		if pe.Child == "" || q.Name < pe.Child {
			pe.Child = q.Name
		}
		out[p] = pe
		m := maxes[p]
		if m == nil {
			m = &[3]largest{{}, {}, {}}
			maxes[p] = m
		}
		for i, l := range []corev1.ResourceList{q.Spec.Capability, q.Spec.Deserved, q.Spec.Guarantee.Resource} {
			for r, amount := range l {
				b, ok := m[i][string(r)]
				if c := amount.Cmp(b.amount); !ok || c > 0 || (c == 0 && q.Name < b.child) {
					m[i][string(r)] = bound{amount: amount, child: q.Name}
				}
			}
		}
	}
	for p, m := range maxes {
		pe := out[p]
		pe.ChildCapability, pe.ChildDeserved, pe.ChildGuarantee = m[0].bounds(), m[1].bounds(), m[2].bounds()
		out[p] = pe
	}
	return out
}

// bound is the largest amount of a resource among children so far.
type bound struct {
	amount resource.Quantity
	child  string
}

type largest map[string]bound

func (l largest) bounds() map[string]admissionv1alpha1.QueueIndexBound {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]admissionv1alpha1.QueueIndexBound, len(l))
	for r, b := range l {
		out[r] = admissionv1alpha1.QueueIndexBound{Amount: b.amount.String(), Child: b.child}
	}
	return out
}

func emptyEntry(e admissionv1alpha1.QueueIndexEntry) bool {
	return e.State == "" && e.Parent == "" && e.Children == 0 && len(e.Capability) == 0 &&
		len(e.Deserved) == 0 && len(e.Guarantee) == 0
}

// amounts writes a resource list as the policies read it (quantity()).
func amounts(l corev1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]string, len(l))
	for r, q := range l {
		out[string(r)] = q.String()
	}
	return out
}
