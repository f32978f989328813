package verdict

// What shows that the schedulers and controller managers run: their
// leader Leases, and for a scheduler without a fresh Lease its latest event
// and a pod it placed.

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/leases"
)

// readLeases reads the Leases of serve and Volcano's controllers, and, for
// each scheduler the pods use and each known scheduler, what shows that it
// runs: its Lease; for the schedulers the pods use whose Lease is not
// fresh, its latest event and a pod it placed.
func (r *Reader) readLeases(ctx context.Context, s *analysis.Snapshot) {
	ns := r.ControllersNamespace
	get := func(ns, name string) *coordinationv1.Lease {
		l, err := r.Kube.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				r.cannot(s, fmt.Sprintf("Lease %s/%s", ns, name), err)
			}
			return nil
		}
		return l
	}
	s.ServeLease = get(ns, leases.Serve)
	s.VolcanoControllerLease = get(ns, leases.VolcanoControllers)

	used := analysis.SchedulerNames(s)
	names := append(append([]string{}, used...), r.SchedulerNames...)
	names = append(names, corev1.DefaultSchedulerName)
	isUsed := map[string]bool{}
	for _, n := range used {
		isUsed[n] = true
	}
	for _, n := range names {
		if _, done := s.Schedulers[n]; done {
			continue
		}
		seen := analysis.SchedulerSeen{}
		lns, lname := ns, n
		if n == corev1.DefaultSchedulerName {
			lns, lname = kubeSchedulerNamespace, kubeSchedulerLease
		}
		seen.LeaseName = lns + "/" + lname
		seen.Lease = get(lns, lname)
		if isUsed[n] && !leaseFresh(seen.Lease, s.Now) {
			seen.LastEvent = r.lastEvent(ctx, s, n)
			seen.BoundPod = r.boundPod(ctx, s, n)
			seen.Probed = true
		}
		s.Schedulers[n] = seen
	}
}

// leaseFresh is a quick look: held and renewed within its duration (the
// analysis judges it again, with its grace).
func leaseFresh(l *coordinationv1.Lease, now time.Time) bool {
	return leases.Of(l).Held(now, 0)
}

// lastEvent is the time of the latest event a scheduler wrote (events of
// every namespace whose source is that scheduler).
func (r *Reader) lastEvent(ctx context.Context, s *analysis.Snapshot, scheduler string) time.Time {
	var last time.Time
	for _, field := range []string{"source", "reportingComponent"} {
		sel := fields.Set{field: scheduler}.AsSelector().String()
		items, _, err := chunk.List[corev1.Event](ctx, r.ChunkSize, metav1.ListOptions{FieldSelector: sel}, r.Kube.CoreV1().Events(metav1.NamespaceAll).List)
		if err != nil {
			r.cannot(s, fmt.Sprintf("events of scheduler %q", scheduler), err)
			return last
		}
		for i := range items {
			if t := analysis.EventTime(&items[i]); t.After(last) {
				last = t
			}
		}
	}
	return last
}

// boundPod names one pod that scheduler placed on a node, if any.
func (r *Reader) boundPod(ctx context.Context, s *analysis.Snapshot, scheduler string) string {
	sel := fields.AndSelectors(fields.OneTermEqualSelector("spec.schedulerName", scheduler),
		fields.OneTermNotEqualSelector("spec.nodeName", "")).String()
	list, err := r.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: 1})
	if err != nil {
		if s.Namespace == "" || !apierrors.IsForbidden(err) {
			r.cannot(s, fmt.Sprintf("pods placed by scheduler %q", scheduler), err)
			return ""
		}
		if list, err = r.Kube.CoreV1().Pods(s.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel, Limit: 1}); err != nil {
			return ""
		}
	}
	if len(list.Items) == 0 {
		return ""
	}
	p := list.Items[0]
	return p.Namespace + "/" + p.Name + " on " + p.Spec.NodeName
}
