package analysis

// Can its queue take it? The queue it goes to, whether that queue and its
// ancestors are Open and it is a leaf, who closed it, and the finished
// podgroups that still count against it.

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// queueName is the queue the object goes to.
func (a *analyzer) queueName(pg *schedulingv1beta1.PodGroup) string {
	s := a.s
	q := ""
	switch {
	case pg != nil:
		q = pg.Spec.Queue
	case s.Kind == Job:
		q = s.Job.Spec.Queue
	case s.Kind == Pod:
		q = rules.PodQueue(s.Pod)
	}
	return rules.QueueOf(q)
}

// checkQueue checks the queue: it exists, is Open, its ancestors are
// Open, and it is a leaf. It returns the queue when it exists.
func (a *analyzer) checkQueue(name string, relevant bool) *schedulingv1beta1.Queue {
	if !relevant && a.s.Kind == Pod && a.s.Pod.Annotations[keys.KubeGroupName] == "" && !a.isVolcano(orDefaultScheduler(a.s.Pod.Spec.SchedulerName)) {
		return nil
	}
	q := a.queues[name]
	obj := "queue/" + name
	if q == nil {
		a.block(QueueMissing, obj, fmt.Sprintf("queue %s does not exist: the scheduler does not consider work in it", name),
			fmt.Sprintf("kubectl vc queue create %s, or submit to a queue that exists ('kubectl vc queue list')", name),
			fmt.Sprintf("%s names queue %s", a.objectRef(), name))
		return nil
	}
	a.checkQueueState(q, obj)
	a.checkAncestors(q)
	if kids := a.children[q.Name]; len(kids) > 0 {
		a.block(QueueNotLeaf, obj, fmt.Sprintf("queue %s has child queues (%s): Volcano runs work in leaf queues only", q.Name, strings.Join(kids, ", ")),
			fmt.Sprintf("submit to one of its children (%s), or make a leaf queue for this work", strings.Join(kids, ", ")),
			fmt.Sprintf("queues with spec.parent=%s: %s", q.Name, strings.Join(kids, ", ")))
	} else {
		a.ok("queue", "queue %s is a leaf (parent %s)", q.Name, orNone(rules.EffectiveParent(q)))
	}
	if st := q.Status.State; st != schedulingv1beta1.QueueStateClosed && st != schedulingv1beta1.QueueStateClosing && st != schedulingv1beta1.QueueStateUnknown {
		a.ok("queue-state", "queue %s is %s", q.Name, queueState(q))
	}
	return q
}

// checkQueueState reports a Closed or Closing queue, and who closed it.
func (a *analyzer) checkQueueState(q *schedulingv1beta1.Queue, obj string) {
	st := q.Status.State
	if st != schedulingv1beta1.QueueStateClosed && st != schedulingv1beta1.QueueStateClosing {
		if st == schedulingv1beta1.QueueStateUnknown {
			a.note(QueueClosed, obj, fmt.Sprintf("queue %s is in state Unknown: the queue controller cannot tell its state", q.Name),
				"see 'kubectl vc doctor' and the queue controller's log", fmt.Sprintf("queue/%s status.state=Unknown", q.Name))
		}
		return
	}
	ev := []string{fmt.Sprintf("queue/%s status.state=%s", q.Name, st)}
	who := a.closedBy(q, &ev)
	msg := fmt.Sprintf("queue %s is %s%s: the scheduler places no new work in it", q.Name, st, who)
	fix := "kubectl vc queue open " + q.Name
	if q.Annotations[keys.ClosedByParent] == "true" {
		fix = "kubectl vc queue open " + rules.EffectiveParent(q) + " (opening the parent re-opens the children it closed)"
	}
	r := a.block(QueueClosed, obj, msg, fix, ev...)
	if st == schedulingv1beta1.QueueStateClosing {
		if stale := a.stale(q.Name); len(stale) > 0 {
			r.Evidence = append(r.Evidence, fmt.Sprintf("it stays Closing while it has podgroups, %d of them finished: %s", len(stale), strings.Join(stale, ", ")))
		}
	}
}

// closedBy says who closed a queue: its parent (the closed-by-parent
// annotation), a CloseQueue Command still pending, or the latest event.
func (a *analyzer) closedBy(q *schedulingv1beta1.Queue, ev *[]string) string {
	who := ""
	if q.Annotations[keys.ClosedByParent] == "true" {
		who = fmt.Sprintf(", closed by its parent %s", rules.EffectiveParent(q))
		*ev = append(*ev, fmt.Sprintf("queue/%s annotation %s=true", q.Name, keys.ClosedByParent))
	}
	for i := range a.s.Commands {
		c := &a.s.Commands[i]
		if t := c.TargetObject; t != nil && t.Kind == "Queue" && t.Name == q.Name {
			*ev = append(*ev, fmt.Sprintf("Command %s/%s action %s created %s ago, not applied yet", c.Namespace, c.Name, c.Action, human(a.s.Now.Sub(c.CreationTimestamp.Time))))
			if who == "" && c.Action == "CloseQueue" {
				who = fmt.Sprintf(", by Command %s/%s", c.Namespace, c.Name)
			}
		}
	}
	var last *corev1.Event
	for i := range a.s.Events {
		e := &a.s.Events[i]
		if e.InvolvedObject.Kind != "Queue" || e.InvolvedObject.Name != q.Name {
			continue
		}
		if e.Reason != "CloseQueue" && e.Reason != "StateChanged" {
			continue
		}
		if last == nil || EventTime(e).After(EventTime(last)) {
			last = e
		}
	}
	if last != nil {
		*ev = append(*ev, fmt.Sprintf("event %s %q from %s %s ago", last.Reason, last.Message, eventSource(last), human(a.s.Now.Sub(EventTime(last)))))
		if who == "" && last.Reason == "CloseQueue" {
			who = ", by a CloseQueue Command (applied and deleted)"
		}
	}
	return who
}

// checkAncestors reports a Closed or Closing queue above q.
func (a *analyzer) checkAncestors(q *schedulingv1beta1.Queue) {
	seen := map[string]bool{q.Name: true}
	for p := a.queues[rules.EffectiveParent(q)]; p != nil && !seen[p.Name]; p = a.queues[rules.EffectiveParent(p)] {
		seen[p.Name] = true
		if st := p.Status.State; st == schedulingv1beta1.QueueStateClosed || st == schedulingv1beta1.QueueStateClosing {
			ev := []string{fmt.Sprintf("queue/%s status.state=%s", p.Name, st)}
			who := a.closedBy(p, &ev)
			a.block(ParentQueueClosed, "queue/"+p.Name, fmt.Sprintf("queue %s above %s is %s%s: nothing below it runs", p.Name, q.Name, st, who),
				"kubectl vc queue open "+p.Name, ev...)
		}
	}
}

// stale lists the podgroups of a queue that are finished but still
// counted: Completed ones holding minResources, and Inqueue or Running
// ones whose pods have all finished.
func (a *analyzer) stale(queue string) []string {
	var out []string
	for i := range a.s.PodGroups {
		pg := &a.s.PodGroups[i]
		if pgQueue(pg) != queue {
			continue
		}
		if isStale(pg) {
			out = append(out, fmt.Sprintf("%s/%s (%s)", pg.Namespace, pg.Name, pgPhase(pg)))
		}
	}
	sort.Strings(out)
	return out
}

func isStale(pg *schedulingv1beta1.PodGroup) bool {
	switch pg.Status.Phase {
	case schedulingv1beta1.PodGroupCompleted:
		return pg.Spec.MinResources != nil
	case schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupRunning:
		done := pg.Status.Succeeded + pg.Status.Failed
		return pg.Status.Running == 0 && done > 0 && done >= pg.Spec.MinMember
	}
	return false
}
