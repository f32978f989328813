package analysis

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// queueTarget analyses what keeps a queue's work from running; it returns
// whether anything waits (a podgroup, or the queue itself when Closed).
func (a *analyzer) queueTarget() bool {
	q := a.queues[a.s.Name]
	if q == nil {
		return false // the command reports a missing queue as an error
	}
	a.rep.Status = queueState(q)
	obj := "queue/" + q.Name

	var own, waiting []*schedulingv1beta1.PodGroup
	counts := map[string]int{}
	for i := range a.s.PodGroups {
		g := &a.s.PodGroups[i]
		if pgQueue(g) != q.Name {
			continue
		}
		own = append(own, g)
		counts[pgPhase(g)]++
		if ph := pgPhase(g); (ph == string(schedulingv1beta1.PodGroupPending) || ph == string(schedulingv1beta1.PodGroupInqueue)) && !isStale(g) {
			waiting = append(waiting, g)
		}
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i].CreationTimestamp.Before(&waiting[j].CreationTimestamp) })

	a.checkSchedulers()
	a.checkQueueState(q, obj)
	a.checkAncestors(q)
	closed := q.Status.State == schedulingv1beta1.QueueStateClosed || q.Status.State == schedulingv1beta1.QueueStateClosing
	if kids := a.children[q.Name]; len(kids) > 0 {
		ev := fmt.Sprintf("queues with spec.parent=%s: %s", q.Name, strings.Join(kids, ", "))
		if len(own) > 0 {
			a.block(QueueNotLeaf, obj, fmt.Sprintf("queue %s has child queues (%s) and %d podgroup(s) of its own: Volcano runs work in leaf queues only", q.Name, strings.Join(kids, ", "), len(own)),
				"submit the work to one of its children", ev)
		} else {
			a.ok("queue", "queue %s is a parent (%s): its work runs in its children", q.Name, strings.Join(kids, ", "))
		}
	} else if !closed {
		a.ok("queue", "queue %s is %s and a leaf (parent %s)", q.Name, queueState(q), orNone(parentName(q)))
	}

	from := len(a.rep.Reasons)
	a.queueCapability(q)
	a.checkDeserved(q, nil)
	if len(waiting) == 0 { // a full queue blocks nothing while nothing waits
		for i := from; i < len(a.rep.Reasons); i++ {
			a.rep.Reasons[i].Blocking = false
		}
	}
	if st := a.stale(q.Name); len(st) > 0 {
		if q.Status.State == schedulingv1beta1.QueueStateClosing {
			a.block(StalePodGroups, obj, fmt.Sprintf("queue %s stays Closing while it counts %d finished podgroup(s)", q.Name, len(st)),
				"delete them (kubectl delete podgroup -n NAMESPACE NAME) when their jobs are done", strings.Join(st, ", "))
		} else if !a.has(StalePodGroups) {
			a.note(StalePodGroups, obj, fmt.Sprintf("queue %s still counts %d finished podgroup(s)", q.Name, len(st)),
				"delete them when their jobs are done: they keep the queue from closing, and Inqueue ones hold minResources", strings.Join(st, ", "))
		}
	}

	if len(waiting) == 0 {
		a.ok("podgroups", "no podgroup waits in queue %s (%s)", q.Name, phaseCounts(counts))
		return closed
	}
	var ev []string
	for _, g := range waiting {
		if len(ev) == maxQuoted {
			ev = append(ev, fmt.Sprintf("and %d more waiting", len(waiting)-maxQuoted))
			break
		}
		if c := latestCondition(g); c != nil && c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue {
			ev = append(ev, fmt.Sprintf("%s (%s, minMember %d) condition Unschedulable reason %s: %q", groupRef(g), pgPhase(g), g.Spec.MinMember, orNone(c.Reason), c.Message))
		} else {
			ev = append(ev, fmt.Sprintf("%s (%s, minMember %d): no Unschedulable condition", groupRef(g), pgPhase(g), g.Spec.MinMember))
		}
	}
	a.block(PodGroupsWaiting, obj, fmt.Sprintf("%d podgroup(s) wait in queue %s (%s)", len(waiting), q.Name, phaseCounts(counts)),
		"run 'kubectl vc why podgroup NAME -n NAMESPACE' for each", ev...)
	return true
}

// queueCapability: a queue (or one above it) whose allocated plus Inqueue
// minResources has reached its capability admits nothing more.
func (a *analyzer) queueCapability(q *schedulingv1beta1.Queue) {
	var fine []string
	for _, x := range a.chain(q) {
		code := QueueCapabilityReached
		if x != q {
			code = ParentCapabilityReached
		}
		inq, _, ninq := a.inqueue(x.Name, nil)
		var reached []ResourceUse
		for _, r := range rules.SortedNames(x.Spec.Capability) {
			c := x.Spec.Capability[r]
			al := x.Status.Allocated[r]
			iq := inq[r]
			used := al.DeepCopy()
			used.Add(iq)
			if used.Cmp(c) >= 0 {
				reached = append(reached, ResourceUse{Resource: string(r), Allocated: al.String(), Inqueue: iq.String(), Used: used.String(), Limit: c.String()})
			} else {
				fine = append(fine, fmt.Sprintf("%s %s: %s used of %s", x.Name, r, used.String(), c.String()))
			}
		}
		if len(reached) == 0 {
			continue
		}
		var parts []string
		for _, u := range reached {
			parts = append(parts, fmt.Sprintf("%s %s allocated + %s Inqueue of %s", u.Resource, u.Allocated, u.Inqueue, u.Limit))
		}
		who := "queue " + x.Name
		if x != q {
			who = fmt.Sprintf("queue %s above %s", x.Name, q.Name)
		}
		r := a.block(code, "queue/"+x.Name, fmt.Sprintf("%s has reached its capability: %s", who, strings.Join(parts, "; ")),
			fmt.Sprintf("wait for work in %s to finish, or raise its capability (kubectl vc queue update %s --capability ...)", x.Name, x.Name),
			fmt.Sprintf("queue/%s spec.capability %s", x.Name, listString(x.Spec.Capability)),
			fmt.Sprintf("queue/%s status.allocated %s", x.Name, orNone(listString(x.Status.Allocated))),
			fmt.Sprintf("%d podgroup(s) Inqueue in %s hold minResources %s", ninq, x.Name, orNone(listString(inq))))
		r.Resources = reached
	}
	if len(fine) > 0 && !a.has(QueueCapabilityReached) && !a.has(ParentCapabilityReached) {
		a.ok("capacity", "within capability: %s", strings.Join(fine, "; "))
	}
}

func parentName(q *schedulingv1beta1.Queue) string { return rules.EffectiveParent(q) }

func phaseCounts(c map[string]int) string {
	var parts []string
	for _, ph := range []schedulingv1beta1.PodGroupPhase{schedulingv1beta1.PodGroupPending, schedulingv1beta1.PodGroupInqueue,
		schedulingv1beta1.PodGroupRunning, schedulingv1beta1.PodGroupUnknown, schedulingv1beta1.PodGroupCompleted} {
		if n := c[string(ph)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ph))
		}
	}
	if len(parts) == 0 {
		return "no podgroups"
	}
	return strings.Join(parts, ", ")
}
