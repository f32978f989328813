package joborder

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Waiting tells whether a podgroup waits in its queue's line: Pending
// (not yet admitted; an unset phase is Pending) or Inqueue (admitted, not
// yet running).
func Waiting(pg *schedulingv1beta1.PodGroup) bool {
	switch pg.Status.Phase {
	case "", schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupInqueue:
		return true
	}
	return false
}

// Phase is the podgroup's phase, Pending when unset (JobInfo.IsPending).
func Phase(pg *schedulingv1beta1.PodGroup) string {
	if pg.Status.Phase == "" {
		return string(schedulingv1beta1.PodGroupPending)
	}
	return string(pg.Status.Phase)
}

// Priorities maps priority class names to values, and keeps the cluster's
// default class, as the scheduler's cache does (addPriorityClass).
type Priorities struct {
	values map[string]int32
	// DefaultClass is the class marked globalDefault ("" when none).
	DefaultClass string
	def          int32
}

// NewPriorities indexes the cluster's priority classes. Kubernetes admits
// one globalDefault class at most; should there be several, the one with
// the greatest name is taken.
func NewPriorities(classes []schedulingv1.PriorityClass) Priorities {
	p := Priorities{values: map[string]int32{}}
	sorted := append([]schedulingv1.PriorityClass(nil), classes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, c := range sorted {
		p.values[c.Name] = c.Value
		if c.GlobalDefault {
			p.DefaultClass, p.def = c.Name, c.Value
		}
	}
	return p
}

// Of is the priority the scheduler gives a podgroup (SchedulerCache's
// Snapshot): its class's value; when it names none or one that does not
// exist, the default class's value, else 0.
func (p Priorities) Of(pg *schedulingv1beta1.PodGroup) int32 {
	if v, ok := p.values[pg.Spec.PriorityClassName]; ok {
		return v
	}
	return p.def
}

// Known tells whether the class exists.
func (p Priorities) Known(name string) bool {
	_, ok := p.values[name]
	return ok
}

// FromPodGroup is the job the scheduler sees for a podgroup and its member
// pods (those annotated with its name), in a cluster whose Ready nodes
// offer total.
func (o Order) FromPodGroup(pg *schedulingv1beta1.PodGroup, pods []corev1.Pod, prio Priorities, total corev1.ResourceList) Job {
	j := Job{
		Namespace: pg.Namespace, Name: pg.Name, UID: pg.UID, Created: pg.CreationTimestamp.Time,
		Phase: Phase(pg), PriorityClass: pg.Spec.PriorityClassName, Priority: prio.Of(pg),
		MinMember: pg.Spec.MinMember,
	}
	allocated := corev1.ResourceList{}
	var placed, succeeded int32
	for i := range pods {
		p := &pods[i]
		switch status(p) {
		case taskPlaced:
			j.ReadyPods++
			placed++
			rules.AddTo(allocated, Requests(p))
		case taskSucceeded:
			j.ReadyPods++
			succeeded++
		case taskPending:
			if bestEffort(p) {
				j.ReadyPods++
			}
		}
	}
	j.Placed = placed > 0 && placed+succeeded >= j.MinMember
	j.Share, j.DominantResource = share(allocated, total)
	// JobInfo.SetPodGroup: the newer annotation first, then the older;
	// the sla plugin falls back to its own argument.
	if d := positiveDuration(pg.Annotations[SLAWaitingTimeAnnotation]); d != nil {
		j.WaitingTime = d
	} else if d := positiveDuration(pg.Annotations[SLAWaitingTime]); d != nil {
		j.WaitingTime = d
	} else {
		j.WaitingTime = o.slaGlobal
	}
	return j
}

type taskStatus int

const (
	taskOther taskStatus = iota
	taskPending
	taskPlaced // bound to a node or running: the scheduler counts it allocated
	taskSucceeded
)

// status is how the scheduler's cache sees a pod (getTaskStatus in
// pkg/scheduler/api/helpers.go): a pod being deleted is releasing, a
// Pending pod with a node is bound.
func status(p *corev1.Pod) taskStatus {
	switch p.Status.Phase {
	case corev1.PodRunning:
		if p.DeletionTimestamp == nil {
			return taskPlaced
		}
	case corev1.PodPending, "":
		switch {
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName == "":
			return taskPending
		default:
			return taskPlaced
		}
	case corev1.PodSucceeded:
		return taskSucceeded
	}
	return taskOther
}

// bestEffort: the pod requests nothing (no CPU, memory or other resource
// but the pod slot itself): the gang plugin counts such a pending pod as
// ready.
func bestEffort(p *corev1.Pod) bool {
	for r, q := range Requests(p) {
		if r != corev1.ResourcePods && !q.IsZero() {
			return false
		}
	}
	return true
}

// Requests is what the scheduler reserves for a pod: its containers'
// requests, or the largest init container's when larger, plus its
// overhead, plus one pod slot.
func Requests(p *corev1.Pod) corev1.ResourceList {
	sum := rules.PodRequests(p)
	rules.AddTo(sum, corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)})
	return sum
}

// share is the drf plugin's dominant share (calculateShare): over each
// resource the cluster offers, allocated as a fraction of it; the largest.
func share(allocated, total corev1.ResourceList) (float64, string) {
	best, name := 0.0, ""
	for _, r := range rules.SortedNames(total) {
		t := total[r]
		if t.IsZero() {
			continue
		}
		a := allocated[r]
		if s := a.AsApproximateFloat64() / t.AsApproximateFloat64(); s > best {
			best, name = s, string(r)
		}
	}
	return best, name
}

// ClusterTotal is what the Ready nodes offer together (the scheduler's
// session total: the allocatable of every Ready node).
func ClusterTotal(nodes []corev1.Node) (total corev1.ResourceList, ready int) {
	total = corev1.ResourceList{}
	for i := range nodes {
		if nodeReady(&nodes[i]) {
			ready++
			rules.AddTo(total, nodes[i].Status.Allocatable)
		}
	}
	return total, ready
}

// ClusterIdle is what the Ready, schedulable nodes have left once the
// pods placed on them are counted.
func ClusterIdle(nodes []corev1.Node, pods []corev1.Pod) corev1.ResourceList {
	idle := corev1.ResourceList{}
	ok := map[string]bool{}
	for i := range nodes {
		n := &nodes[i]
		if nodeReady(n) && !n.Spec.Unschedulable {
			ok[n.Name] = true
			rules.AddTo(idle, n.Status.Allocatable)
		}
	}
	for i := range pods {
		p := &pods[i]
		if !ok[p.Spec.NodeName] || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for r, q := range Requests(p) {
			if v, has := idle[r]; has {
				v.Sub(q)
				idle[r] = v
			}
		}
	}
	return idle
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
