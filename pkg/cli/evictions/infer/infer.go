// Package infer is the pure half of 'kubectl vc evictions': from the
// records Volcano's scheduler leaves (events, pod conditions, pods as they
// are now), read once by the command, it lists every eviction the
// scheduler made and infers the workload each one made room for. It reads
// nothing itself, so every rule is tested with plain objects.
//
// What Volcano's scheduler writes (volcano-sh/volcano, pkg/scheduler):
//
//   - cache.defaultEvictor.Evict, on the victim pod: a Warning event,
//     reason "Evict", message "Pod is evicted, because of <action>"; a
//     Ready=False condition with the same reason and message and a
//     DisruptionTarget=True condition, reason PreemptionByScheduler; then
//     it deletes the pod.
//   - cache.SchedulerCache.Evict, on the victim's PodGroup: a Normal event,
//     reason "Evict", message the action word (preempt, reclaim,
//     gangpreempt, gangreclaim, shuffle).
//   - cache.SchedulerCache.taskUnschedulable, on the preemptor pod only:
//     status.nominatedNodeName, a PodScheduled=False condition and a
//     Warning FailedScheduling event whose message (api.JobInfo's
//     TaskSchedulingReason) says "Pod NS/NAME can possibly be assigned to
//     NODE, once resource is released and minAvailable is satisfied".
//
// No record names the preemptor on the victim's side: the link is inferred
// from the node, the time, the queues and the priorities, and marked so.
package infer

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// The scheduler's words.
const (
	// EvictReason is the reason of the Evict events on the victim pod and
	// on its PodGroup.
	EvictReason = "Evict"
	// EvictMessagePrefix starts the victim pod's Evict event and its Ready
	// condition's message; the action word follows.
	EvictMessagePrefix = "Pod is evicted, because of "
	// FailedScheduling is the reason of the preemptor's event.
	FailedScheduling = "FailedScheduling"
	// OnceReleased is what the preemptor's message says once the
	// scheduler has evicted for it.
	OnceReleased = "once resource is released"
	// PreemptionByScheduler is the reason of the victim's DisruptionTarget
	// condition.
	PreemptionByScheduler = "PreemptionByScheduler"
)

// The actions that evict.
const (
	Preempt     = "preempt"
	Reclaim     = "reclaim"
	GangPreempt = "gangpreempt"
	GangReclaim = "gangreclaim"
	Shuffle     = "shuffle"
)

// Slack is how far apart in time the victim's Evict record and the
// preemptor's "once resource is released" record may be: both are written
// in the same scheduling cycle (1 s by default), and events keep seconds.
const Slack = 5 * time.Second

// Eviction is one eviction the scheduler made.
type Eviction struct {
	// Time is when the scheduler evicted (the victim's Evict event, or
	// its DisruptionTarget condition when the event has expired).
	Time   metav1.Time `json:"time"`
	Action string      `json:"action"`
	// Namespace, Victim and VictimUID name the evicted pod; Victim is
	// empty when only its PodGroup's event is left.
	Namespace string    `json:"namespace"`
	Victim    string    `json:"victim,omitempty"`
	VictimUID types.UID `json:"victimUID,omitempty"`
	Group     string    `json:"group,omitempty"`
	Queue     string    `json:"queue,omitempty"`
	Node      string    `json:"node,omitempty"`
	Priority  *int32    `json:"priority,omitempty"`
	// Count is how many times the record says it happened (an aggregated
	// event); 1 mostly.
	Count int32 `json:"count"`
	// Evidence are the records the eviction was read from.
	Evidence []string `json:"evidence"`
	// For is the workload it made room for, inferred; nil when none was found.
	For *Preemptor `json:"for,omitempty"`
	// Unknown says, in words, what could not be told and why.
	Unknown []string `json:"unknown,omitempty"`
}

// Preemptor is the workload an eviction made room for, as inferred.
type Preemptor struct {
	// Inferred is always true: no record names the preemptor.
	Inferred  bool      `json:"inferred"`
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	UID       types.UID `json:"uid,omitempty"`
	Group     string    `json:"group,omitempty"`
	Queue     string    `json:"queue,omitempty"`
	Priority  *int32    `json:"priority,omitempty"`
	// Evidence links it to the eviction: same node, its record's time,
	// its priority or queue against the victim's.
	Evidence []string `json:"evidence"`
	// Others are other pods that fit as well, when more than one did.
	Others []string `json:"others,omitempty"`
}

// Input is what the command read.
type Input struct {
	// Events: the scheduler's Evict events (pods and PodGroups), the
	// FailedScheduling events of pods, and the pods' Scheduled and kubelet
	// events (which name the node a deleted victim ran on).
	Events []corev1.Event
	// Pods are the pods as they are now.
	Pods      []corev1.Pod
	PodGroups []schedulingv1beta1.PodGroup
	// PriorityClasses are the values of the priority classes, by name
	// (nil when they could not be read).
	PriorityClasses map[string]int32
	// Unreadable says what could not be read ("events in namespace x:
	// forbidden"); a preemptor may hide there.
	Unreadable []string
}

// Action returns the action word of a victim's Evict message, and whether
// the message is the scheduler's.
func Action(message string) (string, bool) {
	a, ok := strings.CutPrefix(message, EvictMessagePrefix)
	return strings.TrimSpace(a), ok
}

// Time is when an event last happened: its lastTimestamp (the legacy
// recorder's), else its eventTime, else firstTimestamp, else its creation.
func Time(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// first is when an event first happened.
func first(e *corev1.Event) time.Time {
	if !e.FirstTimestamp.IsZero() {
		return e.FirstTimestamp.Time
	}
	return Time(e)
}

// NodeOf parses the node out of a preemptor's message, "... can possibly
// be assigned to NODE, once resource is released ...".
func NodeOf(message string) (string, bool) {
	if !strings.Contains(message, OnceReleased) {
		return "", false
	}
	_, after, ok := strings.Cut(message, "assigned to ")
	if !ok {
		return "", false
	}
	node, _, ok := strings.Cut(after, ",")
	node = strings.TrimSpace(node)
	return node, ok && node != ""
}

// state is the input indexed.
type state struct {
	in         Input
	podsByUID  map[types.UID]*corev1.Pod
	podsByName map[string]*corev1.Pod // ns/name
	groups     map[string]*schedulingv1beta1.PodGroup
	// nodeOf is the node a pod UID was placed on, from its Scheduled or
	// kubelet events.
	nodeOf     map[types.UID]string
	candidates []candidate
}

// candidate is a pod the scheduler evicted for, by its own record.
type candidate struct {
	ns, name    string
	uid         types.UID
	node        string
	from, to    time.Time
	timed       bool
	record      string
	group       string
	queue       string
	priority    *int32
	unknownDesc string
}

// Evictions lists every eviction in the input, oldest first, each with
// the workload it made room for where one can be inferred.
func Evictions(in Input) []Eviction {
	s := index(in)
	var out []Eviction
	seen := map[types.UID]bool{}
	for i := range in.Events {
		e := &in.Events[i]
		if e.Reason != EvictReason || e.InvolvedObject.Kind != "Pod" {
			continue
		}
		action, ok := Action(e.Message)
		if !ok {
			continue
		}
		uid := e.InvolvedObject.UID
		if seen[uid] && uid != "" {
			continue
		}
		seen[uid] = true
		ev := Eviction{Time: metav1.NewTime(Time(e)), Action: action, Namespace: e.InvolvedObject.Namespace,
			Victim: e.InvolvedObject.Name, VictimUID: uid, Count: max(e.Count, 1),
			Evidence: []string{fmt.Sprintf("event %s on pod %s/%s (uid %s): %q", e.Reason, e.InvolvedObject.Namespace, e.InvolvedObject.Name, uid, e.Message)}}
		s.victim(&ev)
		out = append(out, ev)
	}
	// A victim that still exists (terminating, or kept by a finalizer)
	// whose event has expired: its conditions say it all but the time's
	// precision.
	for i := range in.Pods {
		p := &in.Pods[i]
		if seen[p.UID] {
			continue
		}
		dt, ready := condition(p, corev1.DisruptionTarget), condition(p, corev1.PodReady)
		if dt == nil || dt.Reason != PreemptionByScheduler || ready == nil || ready.Reason != EvictReason {
			continue
		}
		action, ok := Action(ready.Message)
		if !ok {
			continue
		}
		seen[p.UID] = true
		ev := Eviction{Time: dt.LastTransitionTime, Action: action, Namespace: p.Namespace, Victim: p.Name, VictimUID: p.UID, Count: 1,
			Evidence: []string{fmt.Sprintf("pod %s/%s: condition DisruptionTarget reason %s, condition Ready reason Evict: %q", p.Namespace, p.Name, dt.Reason, ready.Message)},
			Unknown:  []string{"its Evict event has expired (the API server keeps events one hour by default): the time is the condition's"}}
		s.victim(&ev)
		out = append(out, ev)
	}
	out = append(out, s.groupOnly(out)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(&out[j].Time) })
	// A preemptor that is gone since (evicted in its turn) is described
	// by what its own eviction told of it.
	for i := range s.candidates {
		c := &s.candidates[i]
		if c.unknownDesc == "" {
			continue
		}
		for _, ev := range out {
			if ev.VictimUID != "" && ev.VictimUID == c.uid && ev.Group != "" {
				c.group, c.queue, c.priority = ev.Group, ev.Queue, ev.Priority
				c.unknownDesc = ""
				c.record += fmt.Sprintf("; its podgroup, queue and priority from its own eviction (%s at %s)", ev.Action, ev.Time.UTC().Format(time.RFC3339))
				break
			}
		}
	}
	for i := range out {
		s.preemptor(&out[i])
	}
	return out
}

func index(in Input) *state {
	s := &state{in: in, podsByUID: map[types.UID]*corev1.Pod{}, podsByName: map[string]*corev1.Pod{},
		groups: map[string]*schedulingv1beta1.PodGroup{}, nodeOf: map[types.UID]string{}}
	for i := range in.Pods {
		p := &in.Pods[i]
		s.podsByUID[p.UID] = p
		s.podsByName[p.Namespace+"/"+p.Name] = p
	}
	for i := range in.PodGroups {
		pg := &in.PodGroups[i]
		s.groups[pg.Namespace+"/"+pg.Name] = pg
	}
	for i := range in.Events {
		e := &in.Events[i]
		if e.InvolvedObject.Kind != "Pod" || e.InvolvedObject.UID == "" {
			continue
		}
		switch {
		case e.Reason == "Scheduled":
			if _, after, ok := strings.Cut(e.Message, " to "); ok {
				s.nodeOf[e.InvolvedObject.UID] = strings.TrimSpace(after)
			}
		case e.Source.Component == "kubelet" && e.Source.Host != "":
			if _, ok := s.nodeOf[e.InvolvedObject.UID]; !ok {
				s.nodeOf[e.InvolvedObject.UID] = e.Source.Host
			}
		}
	}
	for i := range in.Events {
		e := &in.Events[i]
		if e.Reason != FailedScheduling || e.InvolvedObject.Kind != "Pod" {
			continue
		}
		node, ok := NodeOf(e.Message)
		if !ok {
			continue
		}
		c := candidate{ns: e.InvolvedObject.Namespace, name: e.InvolvedObject.Name, uid: e.InvolvedObject.UID, node: node,
			from: first(e), to: Time(e), timed: true,
			record: fmt.Sprintf("its FailedScheduling event at %s: %q", Time(e).UTC().Format(time.RFC3339), e.Message)}
		s.describe(&c)
		s.candidates = append(s.candidates, c)
	}
	// The preemptor's condition and nominatedNodeName, for a pod whose
	// event has expired (or was aggregated away).
	for i := range in.Pods {
		p := &in.Pods[i]
		if s.hasEventCandidate(p.UID) {
			continue
		}
		c := candidate{ns: p.Namespace, name: p.Name, uid: p.UID}
		if cond := condition(p, corev1.PodScheduled); cond != nil && cond.Status == corev1.ConditionFalse {
			if node, ok := NodeOf(cond.Message); ok {
				c.node = node
				// The condition's lastTransitionTime is when it turned
				// False, not when the scheduler wrote this message: no time.
				c.record = fmt.Sprintf("its PodScheduled condition: %q", cond.Message)
			}
		}
		if c.node == "" && p.Status.NominatedNodeName != "" && p.Spec.NodeName == "" {
			c.node = p.Status.NominatedNodeName
			c.record = "its status.nominatedNodeName " + c.node
		}
		if c.node == "" {
			continue
		}
		s.describe(&c)
		s.candidates = append(s.candidates, c)
	}
	return s
}

func (s *state) hasEventCandidate(uid types.UID) bool {
	for _, c := range s.candidates {
		if c.uid == uid {
			return true
		}
	}
	return false
}

// describe fills a candidate's group, queue and priority from the pod with
// its UID.
func (s *state) describe(c *candidate) {
	p := s.podsByUID[c.uid]
	if p == nil {
		c.unknownDesc = "the pod no longer exists"
		return
	}
	c.priority = p.Spec.Priority
	c.group = p.Annotations[keys.KubeGroupName]
	c.queue = s.queueOf(p.Namespace, c.group, p)
	if c.priority == nil && c.group != "" {
		c.priority = s.groupPriority(p.Namespace, c.group)
	}
}

func (s *state) queueOf(ns, group string, p *corev1.Pod) string {
	if pg := s.groups[ns+"/"+group]; pg != nil && group != "" {
		return rules.QueueOf(pg.Spec.Queue)
	}
	if p != nil {
		if q, _ := rules.QueueAnnotation(p.Annotations); q != "" {
			return q
		}
	}
	return ""
}

// victim fills the victim's group, queue, node and priority: from the pod
// with its UID when it still exists, else from the pod that now has its
// name (a Volcano Job recreates it), its Scheduled and kubelet events, and
// its PodGroup's Evict event.
func (s *state) victim(ev *Eviction) {
	if p := s.podsByUID[ev.VictimUID]; p != nil {
		ev.Node = p.Spec.NodeName
		ev.Group = p.Annotations[keys.KubeGroupName]
		ev.Priority = p.Spec.Priority
		ev.Queue = s.queueOf(p.Namespace, ev.Group, p)
		return
	}
	if n := s.nodeOf[ev.VictimUID]; n != "" {
		ev.Node = n
		ev.Evidence = append(ev.Evidence, fmt.Sprintf("node %s from the events of pod uid %s (Scheduled, kubelet)", n, ev.VictimUID))
	}
	if p := s.podsByName[ev.Namespace+"/"+ev.Victim]; p != nil && ev.Victim != "" {
		ev.Group = p.Annotations[keys.KubeGroupName]
		ev.Priority = p.Spec.Priority
		ev.Queue = s.queueOf(p.Namespace, ev.Group, p)
		ev.Evidence = append(ev.Evidence, fmt.Sprintf("group and priority from pod %s/%s as it is now (recreated under the same name, uid %s)", p.Namespace, p.Name, p.UID))
	}
	if ev.Group == "" {
		if g := s.groupEvent(ev); g != "" {
			ev.Group = g
			ev.Queue = s.queueOf(ev.Namespace, g, nil)
			ev.Evidence = append(ev.Evidence, fmt.Sprintf("group %s from its Evict event (%s) at the same time", g, ev.Action))
		}
	}
	if ev.Priority == nil && ev.Group != "" {
		ev.Priority = s.groupPriority(ev.Namespace, ev.Group)
	}
	if ev.Node == "" {
		ev.Unknown = append(ev.Unknown, "the node it ran on: the pod is gone and no event of it names its node")
	}
	if ev.Group == "" {
		ev.Unknown = append(ev.Unknown, "its podgroup: the pod is gone and no PodGroup Evict event matches it")
	}
}

// groupEvent returns the one PodGroup of the namespace with an Evict event
// of the action at the eviction's time, or "".
func (s *state) groupEvent(ev *Eviction) string {
	found := ""
	for i := range s.in.Events {
		e := &s.in.Events[i]
		if e.Reason != EvictReason || e.InvolvedObject.Kind != "PodGroup" || e.InvolvedObject.Namespace != ev.Namespace ||
			strings.TrimSpace(e.Message) != ev.Action || !within(ev.Time.Time, first(e), Time(e)) {
			continue
		}
		if found != "" && found != e.InvolvedObject.Name {
			return ""
		}
		found = e.InvolvedObject.Name
	}
	return found
}

func (s *state) groupPriority(ns, group string) *int32 {
	pg := s.groups[ns+"/"+group]
	if pg == nil || pg.Spec.PriorityClassName == "" || s.in.PriorityClasses == nil {
		return nil
	}
	if v, ok := s.in.PriorityClasses[pg.Spec.PriorityClassName]; ok {
		return &v
	}
	return nil
}

// groupOnly returns an eviction for each PodGroup Evict event that no
// pod's eviction accounts for: the pods' own events have expired, or were
// not readable.
func (s *state) groupOnly(pods []Eviction) []Eviction {
	var out []Eviction
	for i := range s.in.Events {
		e := &s.in.Events[i]
		if e.Reason != EvictReason || e.InvolvedObject.Kind != "PodGroup" {
			continue
		}
		action := strings.TrimSpace(e.Message)
		var n int32
		for _, p := range pods {
			if p.Namespace == e.InvolvedObject.Namespace && p.Group == e.InvolvedObject.Name && p.Action == action {
				n += p.Count
			}
		}
		count := max(e.Count, 1)
		if n >= count {
			continue
		}
		ev := Eviction{Time: metav1.NewTime(Time(e)), Action: action, Namespace: e.InvolvedObject.Namespace, Group: e.InvolvedObject.Name,
			Count: count - n, Queue: s.queueOf(e.InvolvedObject.Namespace, e.InvolvedObject.Name, nil),
			Priority: s.groupPriority(e.InvolvedObject.Namespace, e.InvolvedObject.Name),
			Evidence: []string{fmt.Sprintf("event Evict on podgroup %s/%s: %q (count %d)", e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Message, count)},
			Unknown:  []string{"the evicted pod: its own Evict event has expired or could not be read; only its PodGroup's event is left"}}
		out = append(out, ev)
	}
	return out
}

// preemptor infers the workload ev made room for.
func (s *state) preemptor(ev *Eviction) {
	if ev.Action == Shuffle {
		ev.Unknown = append(ev.Unknown, "shuffle evicts to rebalance the cluster, for no workload in particular")
		return
	}
	if ev.Node == "" {
		ev.Unknown = append(ev.Unknown, "for whom: the victim's node is not known, so no preemptor can be matched to it")
		return
	}
	type match struct {
		c    *candidate
		dist time.Duration
		evid []string
	}
	var ms []match
	for i := range s.candidates {
		c := &s.candidates[i]
		if c.node != ev.Node || (c.uid != "" && c.uid == ev.VictimUID) {
			continue
		}
		m := match{c: c, evid: []string{fmt.Sprintf("same node %s: %s", c.node, c.record)}}
		if c.timed {
			if !within(ev.Time.Time, c.from, c.to) {
				continue
			}
			m.dist = distance(ev.Time.Time, c.from, c.to)
		} else {
			m.dist = time.Duration(1<<62 - 1)
			m.evid = append(m.evid, "no time on this record: linked by node alone")
		}
		ok := true
		switch ev.Action {
		case Preempt, GangPreempt:
			if c.priority != nil && ev.Priority != nil {
				if *c.priority <= *ev.Priority {
					ok = false
				} else {
					m.evid = append(m.evid, fmt.Sprintf("its priority %d above the victim's %d", *c.priority, *ev.Priority))
				}
			} else {
				m.evid = append(m.evid, "priorities not compared: one of them is not known")
			}
			if c.queue != "" && ev.Queue != "" && c.queue == ev.Queue {
				m.evid = append(m.evid, "same queue "+c.queue)
			}
		case Reclaim, GangReclaim:
			if c.queue != "" && ev.Queue != "" {
				if c.queue == ev.Queue {
					ok = false
				} else {
					m.evid = append(m.evid, fmt.Sprintf("its queue %s reclaims from the victim's queue %s", c.queue, ev.Queue))
				}
			} else {
				m.evid = append(m.evid, "queues not compared: one of them is not known")
			}
		}
		if ok {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		msg := fmt.Sprintf("for whom: no pod's \"%s\" record on node %s near %s", OnceReleased, ev.Node, ev.Time.UTC().Format(time.RFC3339))
		msg += "; its records may have expired (events are kept one hour by default)"
		if len(s.in.Unreadable) > 0 {
			msg += ", or it is a pod in a namespace you cannot read (what could not be read is noted on stderr, and under unreadable in -o json)"
		}
		ev.Unknown = append(ev.Unknown, msg)
		return
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].dist < ms[j].dist })
	best := ms[0]
	c := best.c
	p := &Preemptor{Inferred: true, Namespace: c.ns, Pod: c.name, UID: c.uid, Group: c.group, Queue: c.queue, Priority: c.priority, Evidence: best.evid}
	if c.unknownDesc != "" {
		p.Evidence = append(p.Evidence, c.unknownDesc+": its podgroup, queue and priority are not known")
	}
	for _, m := range ms[1:] {
		if m.c.ns == c.ns && m.c.name == c.name {
			continue
		}
		p.Others = append(p.Others, m.c.ns+"/"+m.c.name)
	}
	ev.For = p
}

// within says whether t is within Slack of [from, to].
func within(t, from, to time.Time) bool {
	return !t.Before(from.Add(-Slack)) && !t.After(to.Add(Slack))
}

func distance(t, from, to time.Time) time.Duration {
	switch {
	case t.Before(from):
		return from.Sub(t)
	case t.After(to):
		return t.Sub(to)
	}
	return 0
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// Describe is the FOR cell: the preemptor with its group, queue and
// priority, marked inferred; or, in words, why none is named.
func (e *Eviction) Describe() string {
	if p := e.For; p != nil {
		var parts []string
		if p.Group != "" {
			parts = append(parts, "group "+p.Group)
		}
		if p.Queue != "" {
			parts = append(parts, "queue "+p.Queue)
		}
		if p.Priority != nil {
			parts = append(parts, fmt.Sprintf("priority %d", *p.Priority))
		}
		s := "pod " + p.Namespace + "/" + p.Pod
		if len(parts) > 0 {
			s += " (" + strings.Join(parts, ", ") + ")"
		}
		s += " [inferred]"
		if len(p.Others) > 0 {
			s += fmt.Sprintf(" or one of %d others", len(p.Others))
		}
		return s
	}
	if e.Action == Shuffle {
		return "<no one: shuffle rebalances>"
	}
	return "<unknown: see -o wide>"
}
