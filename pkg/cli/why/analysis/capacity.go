package analysis

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// NoReadyNodes: no node is Ready and schedulable.
const NoReadyNodes Code = "NoReadyNodes"

// checkCapacity checks what the group needs against its queue and the
// queues above it (capability, deserved), and against the cluster's nodes.
//
// A Pending group must first be enqueued: Volcano's scheduler admits it
// when its minResources, plus what the queue has allocated, plus the
// minResources of the queue's other Inqueue groups, fit the capability (a
// group without minResources is admitted unchecked). An Inqueue group's
// pods are then placed while allocated plus their requests fit.
func (a *analyzer) checkCapacity(pg *schedulingv1beta1.PodGroup, q *schedulingv1beta1.Queue) {
	a.checkCluster(pg)
	enqueue := pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending
	var need corev1.ResourceList
	what := ""
	switch {
	case enqueue && pg.Spec.MinResources != nil:
		need, what = *pg.Spec.MinResources, "its minResources"
	case enqueue:
		a.ok("capacity", "PodGroup %s sets no minResources: the scheduler enqueues it without checking the queue's capacity", pg.Name)
	default:
		var n int
		need, n = a.unplacedRequests(pg)
		what = fmt.Sprintf("the requests of its %d unplaced pod(s)", n)
	}
	mr := corev1.ResourceList(nil)
	if pg.Spec.MinResources != nil {
		mr = *pg.Spec.MinResources
	}
	var fine []string
	blocked := false
	for _, x := range a.chain(q) {
		code, overCode := QueueCapabilityReached, MinResourcesOverCapability
		if x != q {
			code = ParentCapabilityReached
		}
		inq, dead, ninq := a.inqueue(x.Name, pg)
		var over, reached []ResourceUse
		var deadHelps = true
		for _, r := range rules.SortedNames(need) {
			c, ok := x.Spec.Capability[r]
			if !ok {
				continue
			}
			n := need[r]
			if m, ok := mr[r]; ok && m.Cmp(c) > 0 {
				over = append(over, ResourceUse{Resource: string(r), Needed: m.String(), Limit: c.String()})
				continue
			}
			alloc := x.Status.Allocated[r]
			used := alloc.DeepCopy()
			u := ResourceUse{Resource: string(r), Needed: n.String(), Allocated: alloc.String(), Limit: c.String()}
			if enqueue {
				iq := inq[r]
				used.Add(iq)
				u.Inqueue = iq.String()
			}
			u.Used = used.String()
			total := used.DeepCopy()
			total.Add(n)
			if total.Cmp(c) > 0 {
				reached = append(reached, u)
				d := dead[r]
				total.Sub(d)
				if d.IsZero() || total.Cmp(c) > 0 {
					deadHelps = false
				}
			} else {
				fine = append(fine, fmt.Sprintf("%s %s: %s used + %s needed of %s", x.Name, r, used.String(), n.String(), c.String()))
			}
		}
		if len(over) > 0 {
			blocked = true
			r := a.block(overCode, "queue/"+x.Name,
				fmt.Sprintf("the group's minResources is larger than the capability of queue %s (%s): it can never run there", x.Name, arith(over, false)),
				fmt.Sprintf("lower what the group asks (its pods' requests or minMember), or raise the capability: kubectl vc queue update %s --capability %s", x.Name, raised(x.Spec.Capability, over)),
				fmt.Sprintf("%s spec.minResources %s", groupRef(pg), listString(mr)), fmt.Sprintf("queue/%s spec.capability %s", x.Name, listString(x.Spec.Capability)))
			r.Resources = over
		}
		if len(reached) > 0 {
			blocked = true
			who := "its queue " + x.Name
			if x != q {
				who = fmt.Sprintf("queue %s above %s", x.Name, q.Name)
			}
			ev := []string{fmt.Sprintf("queue/%s spec.capability %s", x.Name, listString(x.Spec.Capability)),
				fmt.Sprintf("queue/%s status.allocated %s", x.Name, orNone(listString(x.Status.Allocated))),
				fmt.Sprintf("%s needs %s: %s", groupRef(pg), what, listString(need))}
			if enqueue {
				ev = append(ev, fmt.Sprintf("%d other podgroup(s) Inqueue in %s hold minResources %s", ninq, x.Name, orNone(listString(inq))))
			}
			r := a.block(code, "queue/"+x.Name,
				fmt.Sprintf("%s has reached its capability: %s", who, arith(reached, true)),
				fmt.Sprintf("wait for work in %s to finish, or raise its capability: kubectl vc queue update %s --capability %s", x.Name, x.Name, raisedBy(x.Spec.Capability, reached)),
				ev...)
			r.Resources = reached
			if deadHelps && len(dead) > 0 {
				st := a.stale(x.Name)
				a.block(StalePodGroups, "queue/"+x.Name,
					fmt.Sprintf("finished podgroups still hold minResources %s in queue %s; without them the group would fit", listString(dead), x.Name),
					"delete the finished podgroups (kubectl delete podgroup -n NAMESPACE NAME), or their finished jobs",
					fmt.Sprintf("Inqueue or Running with no running pod and all pods finished: %s", strings.Join(st, ", ")))
			}
		}
	}
	if !blocked && len(fine) > 0 {
		a.ok("capacity", "within capability: %s", strings.Join(fine, "; "))
	}
	a.checkDeserved(q, pg)
	if st := a.stale(q.Name); len(st) > 0 && !a.has(StalePodGroups) && q.Status.State != schedulingv1beta1.QueueStateClosing {
		a.note(StalePodGroups, "queue/"+q.Name, fmt.Sprintf("queue %s still counts %d finished podgroup(s)", q.Name, len(st)),
			"delete them when their jobs are done: they keep the queue from closing, and Inqueue ones hold minResources",
			strings.Join(st, ", "))
	}
}

// chain is q and the queues above it, root left out (its resources are
// the cluster's).
func (a *analyzer) chain(q *schedulingv1beta1.Queue) []*schedulingv1beta1.Queue {
	out := []*schedulingv1beta1.Queue{}
	seen := map[string]bool{}
	for x := q; x != nil && !seen[x.Name] && x.Name != keys.RootQueue; x = a.queues[rules.EffectiveParent(x)] {
		seen[x.Name] = true
		out = append(out, x)
	}
	return out
}

// subtree is the names of queue and every queue below it.
func (a *analyzer) subtree(queue string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if out[n] {
			return
		}
		out[n] = true
		for _, c := range a.children[n] {
			walk(c)
		}
	}
	walk(queue)
	return out
}

// inqueue sums the minResources of the Inqueue podgroups in queue and below
// it, except pg; dead is the part of finished groups.
func (a *analyzer) inqueue(queue string, pg *schedulingv1beta1.PodGroup) (sum, dead corev1.ResourceList, n int) {
	sum, dead = corev1.ResourceList{}, corev1.ResourceList{}
	in := a.subtree(queue)
	for i := range a.s.PodGroups {
		g := &a.s.PodGroups[i]
		if (pg != nil && g.Namespace == pg.Namespace && g.Name == pg.Name) || !in[pgQueue(g)] ||
			g.Status.Phase != schedulingv1beta1.PodGroupInqueue || g.Spec.MinResources == nil {
			continue
		}
		n++
		rules.AddTo(sum, *g.Spec.MinResources)
		if isStale(g) {
			rules.AddTo(dead, *g.Spec.MinResources)
		}
	}
	return sum, dead, n
}

// unplacedRequests sums the requests of the group's pods that are not on a
// node yet, as many as it still needs to reach minMember (at least one).
func (a *analyzer) unplacedRequests(pg *schedulingv1beta1.PodGroup) (corev1.ResourceList, int) {
	var placed int32
	var unplaced []corev1.ResourceList
	for _, p := range a.livePods() {
		if p.Spec.NodeName != "" {
			placed++
			continue
		}
		unplaced = append(unplaced, rules.PodRequests(p))
	}
	return rules.StillToPlace(pg.Spec.MinMember, placed, unplaced)
}

// checkDeserved: a queue over its deserved share gets nothing more while
// other queues wait (and may have its work reclaimed).
func (a *analyzer) checkDeserved(q *schedulingv1beta1.Queue, self *schedulingv1beta1.PodGroup) {
	if len(q.Spec.Deserved) == 0 {
		return
	}
	var over []ResourceUse
	for _, r := range rules.SortedNames(q.Spec.Deserved) {
		d := q.Spec.Deserved[r]
		al := q.Status.Allocated[r]
		if al.Cmp(d) >= 0 {
			over = append(over, ResourceUse{Resource: string(r), Allocated: al.String(), Used: al.String(), Limit: d.String()})
		}
	}
	if len(over) == 0 {
		a.ok("deserved", "queue %s is within its deserved share %s", q.Name, listString(q.Spec.Deserved))
		return
	}
	waiting := a.waitingElsewhere(q.Name, self)
	if len(waiting) == 0 {
		a.ok("deserved", "queue %s is at or over its deserved share (%s) but no other queue waits: it may use what is idle", q.Name, arith(over, false))
		return
	}
	r := a.block(QueueOverDeserved, "queue/"+q.Name,
		fmt.Sprintf("queue %s has reached its deserved share (%s) while %d podgroup(s) of other queues wait: it gets nothing more, and may lose work to reclaim", q.Name, arith(over, false), len(waiting)),
		fmt.Sprintf("wait for work in %s to finish or be reclaimed, or raise its deserved share (kubectl vc queue update %s --deserved ...)", q.Name, q.Name),
		fmt.Sprintf("queue/%s spec.deserved %s", q.Name, listString(q.Spec.Deserved)),
		fmt.Sprintf("queue/%s status.allocated %s", q.Name, orNone(listString(q.Status.Allocated))),
		fmt.Sprintf("waiting in other queues: %s", strings.Join(first(waiting, 5), ", ")))
	r.Resources = over
}

// waitingElsewhere lists the podgroups of other queues that wait (Pending
// or Inqueue, not finished).
func (a *analyzer) waitingElsewhere(queue string, self *schedulingv1beta1.PodGroup) []string {
	var out []string
	for i := range a.s.PodGroups {
		g := &a.s.PodGroups[i]
		if pgQueue(g) == queue || (self != nil && g.UID == self.UID && g.Name == self.Name) || isStale(g) {
			continue
		}
		if ph := pgPhase(g); ph == string(schedulingv1beta1.PodGroupPending) || ph == string(schedulingv1beta1.PodGroupInqueue) {
			out = append(out, fmt.Sprintf("%s/%s (queue %s)", g.Namespace, g.Name, pgQueue(g)))
		}
	}
	sort.Strings(out)
	return out
}

func (a *analyzer) has(code Code) bool {
	for _, r := range a.rep.Reasons {
		if r.Reason == code {
			return true
		}
	}
	return false
}
