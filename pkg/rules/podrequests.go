package rules

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// PodRequests is what the scheduler reserves for a pod: the sum of its
// containers' requests, or the largest init container's when larger, plus
// its overhead. why's capacity reasons and queue pending's shares both
// read it.
func PodRequests(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		AddTo(sum, c.Resources.Requests)
	}
	for _, c := range p.Spec.InitContainers {
		for r, q := range c.Resources.Requests {
			if cur, ok := sum[r]; !ok || q.Cmp(cur) > 0 {
				sum[r] = q.DeepCopy()
			}
		}
	}
	AddTo(sum, p.Spec.Overhead)
	return sum
}

// AddTo adds each quantity of add to sum's.
func AddTo(sum, add corev1.ResourceList) {
	for r, q := range add {
		v := sum[r]
		v.Add(q)
		sum[r] = v
	}
}

// SortedNames is the list's resource names in order, for output that is
// the same from run to run.
func SortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for r := range l {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// StillToPlace is what a gang still needs placed: the requests of the
// first minMember-placed of its unplaced pods, at least one of them and at
// most all, and how many that is.
func StillToPlace(minMember, placed int32, unplaced []corev1.ResourceList) (corev1.ResourceList, int) {
	k := min(max(int(minMember-placed), 1), len(unplaced))
	sum := corev1.ResourceList{}
	for _, r := range unplaced[:k] {
		AddTo(sum, r)
	}
	return sum, k
}
