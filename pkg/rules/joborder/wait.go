package joborder

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Short is one resource a waiting podgroup lacks: it needs Need, Used is
// already taken, and Limit is all there is.
type Short struct {
	// Against is "capability", "deserved" or "cluster".
	Against  string `json:"against"`
	Queue    string `json:"queue,omitempty"`
	Resource string `json:"resource"`
	Need     string `json:"need"`
	Used     string `json:"used,omitempty"`
	Limit    string `json:"limit"`
}

func (s Short) String() string {
	if s.Against == "cluster" {
		return fmt.Sprintf("%s: needs %s, the Ready nodes have %s idle", s.Resource, s.Need, s.Limit)
	}
	return fmt.Sprintf("%s: needs %s, queue %s uses %s of its %s %s", s.Resource, s.Need, s.Queue, s.Used, s.Against, s.Limit)
}

// Shorts writes a list of shortages on one line.
func Shorts(ss []Short) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, "; ")
}

// Wants is what a waiting podgroup waits for, given its queue, the
// minResources of the queue's other Inqueue podgroups, what the group
// still needs placed (its unplaced pods' requests up to minMember) and
// the cluster's idle resources.
//
// A Pending group waits to be admitted (the enqueue action: the proportion
// plugin's JobEnqueueableFn admits it while its minResources, plus what
// the queue has allocated, plus the minResources of the queue's Inqueue
// groups, fit the capability). An Inqueue group waits for its pods to be
// placed (the allocate action: within the queue's deserved share and on
// nodes with room).
func Wants(pg *schedulingv1beta1.PodGroup, q *schedulingv1beta1.Queue, otherInqueue, unplaced, idle corev1.ResourceList) []Short {
	var out []Short
	var need corev1.ResourceList
	if pg.Spec.MinResources != nil {
		need = *pg.Spec.MinResources
	}
	pending := Phase(pg) == string(schedulingv1beta1.PodGroupPending)
	if pending && need != nil {
		if otherInqueue == nil {
			otherInqueue = corev1.ResourceList{}
		}
		out = append(out, over("capability", q, q.Spec.Capability, need, otherInqueue)...)
	}
	if !pending && len(unplaced) > 0 {
		need = unplaced
		out = append(out, over("deserved", q, q.Spec.Deserved, need, nil)...)
	}
	for _, r := range rules.SortedNames(need) {
		if r == corev1.ResourcePods {
			continue
		}
		n, free := need[r], idle[r]
		if n.Cmp(free) > 0 {
			out = append(out, Short{Against: "cluster", Resource: string(r), Need: n.String(), Limit: free.String()})
		}
	}
	return out
}

// over lists the resources of need that the queue's allocated resources,
// plus also (when given), plus need would take past limit.
func over(against string, q *schedulingv1beta1.Queue, limit, need, also corev1.ResourceList) []Short {
	var out []Short
	for _, r := range rules.SortedNames(need) {
		l, ok := limit[r]
		if !ok {
			continue
		}
		n := need[r]
		used := q.Status.Allocated[r].DeepCopy()
		if also != nil {
			used.Add(also[r])
		}
		total := used.DeepCopy()
		total.Add(n)
		if total.Cmp(l) > 0 {
			out = append(out, Short{Against: against, Queue: q.Name, Resource: string(r), Need: n.String(), Used: used.String(), Limit: l.String()})
		}
	}
	return out
}
