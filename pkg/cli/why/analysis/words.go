package analysis

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// What Volcano's scheduler writes. The gang plugin sets the condition
// Unschedulable (reason NotEnoughResources) with "N/M tasks in gang
// unschedulable: ...": N of the minMember pods cannot be placed, M pods
// exist; a gang that lacks pods gets reason NotEnoughTasks with
// "... valid: V, min: M".
var (
	gangMessage  = regexp.MustCompile(`^(\d+)/(\d+) tasks in gang unschedulable`)
	validMessage = regexp.MustCompile(`valid: (\d+), min: (\d+)`)
)

// maxQuoted is how many of the scheduler's events a reason quotes.
const maxQuoted = 3

// checkSchedulerWords quotes what the scheduler said: the PodGroup's
// latest condition, the pods' PodScheduled condition, and the latest
// Warning or scheduling events of the object, its group and its pods.
func (a *analyzer) checkSchedulerWords(pg *schedulingv1beta1.PodGroup) {
	ev := a.podConditions()
	ev = append(ev, a.quotedEvents()...)
	if pg != nil {
		if c := latestCondition(pg); c != nil && c.Type == schedulingv1beta1.PodGroupUnschedulableType && c.Status == corev1.ConditionTrue {
			a.unschedulable(pg, c, ev)
			return
		} else if c != nil {
			a.ok("scheduler-said", "the PodGroup's latest condition is %s=%s (%s)", c.Type, c.Status, orNone(c.Reason))
		}
	}
	if len(ev) > 0 {
		a.block(SchedulerEvents, a.objectRef(), "the scheduler's latest words on it (quoted)",
			"act on what they say; 'kubectl get events -n "+a.s.Namespace+"' has the rest", ev...)
		return
	}
	a.ok("scheduler-said", "no Unschedulable condition and no Warning or scheduling event on it")
}

// unschedulable reports the gang condition with its arithmetic.
func (a *analyzer) unschedulable(pg *schedulingv1beta1.PodGroup, c *schedulingv1beta1.PodGroupCondition, ev []string) {
	quote := fmt.Sprintf("%s condition Unschedulable=True reason %s %s ago: %q", groupRef(pg), orNone(c.Reason), human(a.s.Now.Sub(c.LastTransitionTime.Time)), c.Message)
	ev = append([]string{quote}, ev...)
	live := int32(len(a.livePods()))
	g := &Gang{MinMember: pg.Spec.MinMember, Pods: live}
	msg := fmt.Sprintf("the scheduler says: %s", c.Message)
	fix := "free or add what the pods need (see the scheduler's words), or lower minMember"
	if m := gangMessage.FindStringSubmatch(c.Message); m != nil {
		unready, _ := strconv.Atoi(m[1])
		tasks, _ := strconv.Atoi(m[2])
		g.Pods = int32(tasks)
		g.Unplaceable = int32(unready)
		g.Placeable = max(pg.Spec.MinMember-int32(unready), 0)
		msg = fmt.Sprintf("the gang cannot be placed: it needs %d pods at once (minMember), %d can be placed, %d cannot (%d pods exist)",
			g.MinMember, g.Placeable, g.Unplaceable, g.Pods)
		if o := originReason(c.Message); o != "" {
			msg += "; the first that does not fit: " + o
		}
	} else if m := validMessage.FindStringSubmatch(c.Message); m != nil {
		valid, _ := strconv.Atoi(m[1])
		minimum, _ := strconv.Atoi(m[2])
		g.Pods, g.MinMember = int32(valid), int32(minimum)
		g.Placeable, g.Unplaceable = 0, int32(minimum)
		msg = fmt.Sprintf("the gang lacks pods: it needs %d pods at once (minMember), %d valid pod(s) exist", minimum, valid)
		fix = fmt.Sprintf("create the missing %d pod(s), or lower minMember", minimum-valid)
	}
	r := a.block(Unschedulable, groupRef(pg), msg, fix, ev...)
	r.Gang = g
}

// originReason is the "Origin reason is ...: ..." part of a gang message:
// why the first pod did not fit.
func originReason(msg string) string {
	const marker = "Origin reason is "
	i := strings.Index(msg, marker)
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSpace(msg[i+len(marker):]), ".")
}

// latestCondition is the group's most recent condition.
func latestCondition(pg *schedulingv1beta1.PodGroup) *schedulingv1beta1.PodGroupCondition {
	var out *schedulingv1beta1.PodGroupCondition
	for i := range pg.Status.Conditions {
		c := &pg.Status.Conditions[i]
		if out == nil || !c.LastTransitionTime.Before(&out.LastTransitionTime) {
			out = c
		}
	}
	return out
}

// podConditions quotes the PodScheduled=False conditions of unplaced pods
// (Volcano writes why there), the first few.
func (a *analyzer) podConditions() []string {
	pods := a.s.Pods
	if a.s.Kind == Pod && a.s.Pod != nil {
		pods = []corev1.Pod{*a.s.Pod}
	}
	var out []string
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
				out = append(out, fmt.Sprintf("pod/%s/%s condition PodScheduled=False reason %s: %q", p.Namespace, p.Name, orNone(c.Reason), c.Message))
			}
		}
		if len(out) >= 2 {
			break
		}
	}
	return out
}

// quotedEvents quotes the latest Warning or scheduling events of the
// object, its group and its pods (not its queue's), newest first, each
// message once.
func (a *analyzer) quotedEvents() []string {
	var evs []*corev1.Event
	for i := range a.s.Events {
		e := &a.s.Events[i]
		if e.InvolvedObject.Kind == "Queue" {
			continue
		}
		if e.Type == corev1.EventTypeWarning || e.Reason == "Unschedulable" || e.Reason == "FailedScheduling" {
			evs = append(evs, e)
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return EventTime(evs[i]).After(EventTime(evs[j])) })
	seen := map[string]bool{}
	var out []string
	for _, e := range evs {
		key := e.Reason + "\x00" + e.Message
		if seen[key] {
			continue
		}
		seen[key] = true
		count := ""
		if n := eventCount(e); n > 1 {
			count = fmt.Sprintf(" (x%d)", n)
		}
		out = append(out, fmt.Sprintf("event %s %s on %s/%s from %s %s ago%s: %q", e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, eventSource(e), human(a.s.Now.Sub(EventTime(e))), count, e.Message))
		if len(out) == maxQuoted {
			break
		}
	}
	return out
}
