package topology

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Usage is what each node offers and what its pods take, as the scheduler
// counts a node's idle resources: allocatable less the requests of the
// pods bound to it that have not finished.
type Usage struct {
	alloc map[string]corev1.ResourceList
	used  map[string]corev1.ResourceList
	// PodsRead tells whether the pods of every namespace could be read;
	// without them idle is not known.
	PodsRead bool
}

// NewUsage sums the requests of pods per node.
func NewUsage(nodes []corev1.Node, pods []corev1.Pod, podsRead bool) *Usage {
	u := &Usage{alloc: map[string]corev1.ResourceList{}, used: map[string]corev1.ResourceList{}, PodsRead: podsRead}
	for i := range nodes {
		u.alloc[nodes[i].Name] = nodes[i].Status.Allocatable
	}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if u.used[p.Spec.NodeName] == nil {
			u.used[p.Spec.NodeName] = corev1.ResourceList{}
		}
		rules.AddTo(u.used[p.Spec.NodeName], rules.PodRequests(p))
	}
	return u
}

// Of returns the allocatable and idle resources of nodes together (idle
// never below zero per node).
func (u *Usage) Of(nodes []string) (alloc, idle corev1.ResourceList) {
	alloc, idle = corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range nodes {
		a := u.alloc[n]
		rules.AddTo(alloc, a)
		for r, q := range a {
			free := q.DeepCopy()
			if used, ok := u.used[n][r]; ok {
				free.Sub(used)
			}
			if free.Sign() < 0 {
				free = resource.Quantity{Format: q.Format}
			}
			cur := idle[r]
			cur.Add(free)
			idle[r] = cur
		}
	}
	return Schedulable(alloc), Schedulable(idle)
}

// Used returns what the pods on nodes request together.
func (u *Usage) Used(nodes []string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range nodes {
		rules.AddTo(out, u.used[n])
	}
	return out
}

// Short lists the resources shown in tables: what is short of need in
// have, per resource of need ("cpu 1 < 2").
func Short(need, have corev1.ResourceList) []string {
	var out []string
	for _, r := range rules.SortedNames(need) {
		n := need[r]
		h := have[r]
		if n.Cmp(h) > 0 {
			out = append(out, string(r)+" "+h.String()+" < "+n.String())
		}
	}
	return out
}

// Schedulable keeps the resources jobs ask of a topology: cpu, memory
// and extended resources (a GPU), and drops zero amounts; pods,
// ephemeral storage, huge pages and the quota names a podgroup
// controller writes into minResources (count/pods, requests.cpu) would
// only widen the tables, and the scheduler places by the former.
func Schedulable(l corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for r, q := range l {
		name := string(r)
		extended := strings.Contains(name, "/") && !strings.HasPrefix(name, "count/") && !strings.HasPrefix(name, "requests.")
		if r == corev1.ResourceCPU || r == corev1.ResourceMemory || extended {
			if !q.IsZero() || r == corev1.ResourceCPU {
				out[r] = q
			}
		}
	}
	return out
}
