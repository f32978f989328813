package infer

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

var t0 = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func at(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(d)) }

// podEvent is an event on a pod as client-go's legacy recorder writes it.
func podEvent(ns, name string, uid types.UID, typ, reason, msg string, when time.Duration) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + ".1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: name, UID: uid},
		Type:           typ, Reason: reason, Message: msg, Count: 1, FirstTimestamp: at(when), LastTimestamp: at(when),
		Source: corev1.EventSource{Component: "volcano"}}
}

// evicted is defaultEvictor.Evict's event on the victim.
func evicted(ns, name string, uid types.UID, action string, when time.Duration) corev1.Event {
	return podEvent(ns, name, uid, corev1.EventTypeWarning, EvictReason, EvictMessagePrefix+action, when)
}

// groupEvicted is SchedulerCache.Evict's event on the victim's PodGroup.
func groupEvicted(ns, group, action string, when time.Duration, count int32) corev1.Event {
	e := corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: group + ".1"},
		InvolvedObject: corev1.ObjectReference{Kind: "PodGroup", APIVersion: "scheduling.volcano.sh/v1beta1", Namespace: ns, Name: group},
		Type:           corev1.EventTypeNormal, Reason: EvictReason, Message: action, Count: count, FirstTimestamp: at(when), LastTimestamp: at(when)}
	return e
}

// released is taskUnschedulable's event on the preemptor.
func released(ns, name string, uid types.UID, node string, when time.Duration) corev1.Event {
	return podEvent(ns, name, uid, corev1.EventTypeWarning, FailedScheduling,
		"Pod "+ns+"/"+name+" can possibly be assigned to "+node+", once resource is released and minAvailable is satisfied", when)
}

func pod(ns, name string, uid types.UID, group, node string, prio int32) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uid, Annotations: map[string]string{keys.KubeGroupName: group}},
		Spec: corev1.PodSpec{NodeName: node, Priority: ptr.To(prio), SchedulerName: "volcano"}}
}

func group(ns, name, queue string) schedulingv1beta1.PodGroup {
	return schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: schedulingv1beta1.PodGroupSpec{Queue: queue}}
}

func one(t *testing.T, in Input) Eviction {
	t.Helper()
	out := Evictions(in)
	if len(out) != 1 {
		t.Fatalf("want 1 eviction, got %d: %+v", len(out), out)
	}
	return out[0]
}

func has(t *testing.T, what string, list []string, sub string) {
	t.Helper()
	for _, s := range list {
		if strings.Contains(s, sub) {
			return
		}
	}
	t.Errorf("%s: no line with %q in %q", what, sub, list)
}

func TestPreemptWithinQueue(t *testing.T) {
	in := Input{
		Events: []corev1.Event{
			evicted("a", "low-0", "u-low", Preempt, 0),
			groupEvicted("a", "low", Preempt, 0, 1),
			released("a", "high-0", "u-high", "n1", time.Second),
			// another pod waits on another node: not the one
			released("a", "other-0", "u-other", "n2", time.Second),
		},
		Pods: []corev1.Pod{
			pod("a", "low-0", "u-low", "low", "n1", 10),
			pod("a", "high-0", "u-high", "high", "", 1000),
			pod("a", "other-0", "u-other", "other", "", 1000),
		},
		PodGroups: []schedulingv1beta1.PodGroup{group("a", "low", "q1"), group("a", "high", "q1"), group("a", "other", "q1")},
	}
	ev := one(t, in)
	if ev.Action != Preempt || ev.Victim != "low-0" || ev.Node != "n1" || ev.Group != "low" || ev.Queue != "q1" {
		t.Fatalf("eviction: %+v", ev)
	}
	p := ev.For
	if p == nil || p.Pod != "high-0" || p.Group != "high" || p.Queue != "q1" || !p.Inferred || *p.Priority != 1000 {
		t.Fatalf("for: %+v (unknown %q)", p, ev.Unknown)
	}
	has(t, "evidence", p.Evidence, "same node n1")
	has(t, "evidence", p.Evidence, "priority 1000 above the victim's 10")
	if d := ev.Describe(); !strings.Contains(d, "pod a/high-0 (group high, queue q1, priority 1000) [inferred]") {
		t.Errorf("describe: %s", d)
	}
}

func TestPreemptNeedsHigherPriority(t *testing.T) {
	in := Input{
		Events: []corev1.Event{evicted("a", "low-0", "u-low", Preempt, 0), released("a", "same-0", "u-same", "n1", 0)},
		Pods:   []corev1.Pod{pod("a", "low-0", "u-low", "low", "n1", 10), pod("a", "same-0", "u-same", "same", "", 10)},
	}
	ev := one(t, in)
	if ev.For != nil {
		t.Fatalf("a pod of the same priority cannot preempt: %+v", ev.For)
	}
	has(t, "unknown", ev.Unknown, "may have expired")
}

func TestReclaimAcrossQueues(t *testing.T) {
	in := Input{
		Events: []corev1.Event{
			evicted("a", "low-0", "u-low", Reclaim, 0),
			// a pod of the victim's own queue does not reclaim
			released("a", "mate-0", "u-mate", "n1", 0),
			released("b", "team-b-0", "u-b", "n1", 2*time.Second),
		},
		Pods: []corev1.Pod{
			pod("a", "low-0", "u-low", "low", "n1", 1000),
			pod("a", "mate-0", "u-mate", "mate", "", 0),
			pod("b", "team-b-0", "u-b", "tb", "", 0),
		},
		PodGroups: []schedulingv1beta1.PodGroup{group("a", "low", "q1"), group("a", "mate", "q1"), group("b", "tb", "q2")},
	}
	ev := one(t, in)
	if ev.For == nil || ev.For.Pod != "team-b-0" || ev.For.Queue != "q2" || len(ev.For.Others) != 0 {
		t.Fatalf("for: %+v", ev.For)
	}
	has(t, "evidence", ev.For.Evidence, "its queue q2 reclaims from the victim's queue q1")
}

func TestTooFarApartInTime(t *testing.T) {
	in := Input{
		Events: []corev1.Event{evicted("a", "low-0", "u-low", Preempt, 0), released("a", "high-0", "u-high", "n1", time.Minute)},
		Pods:   []corev1.Pod{pod("a", "low-0", "u-low", "low", "n1", 1), pod("a", "high-0", "u-high", "high", "", 100)},
	}
	if ev := one(t, in); ev.For != nil {
		t.Fatalf("a record a minute later is another cycle's: %+v", ev.For)
	}
}

func TestShuffleIsForNoOne(t *testing.T) {
	in := Input{Events: []corev1.Event{evicted("a", "p-0", "u", Shuffle, 0)}, Pods: []corev1.Pod{pod("a", "p-0", "u", "g", "n1", 0)}}
	ev := one(t, in)
	if ev.For != nil || !strings.Contains(ev.Describe(), "shuffle") {
		t.Fatalf("%+v", ev)
	}
}

// A Volcano Job's evicted pod is deleted and recreated under the same
// name with a new UID: the eviction belongs to the old UID; its node comes
// from the old UID's Scheduled event, not from the new pod.
func TestRecreatedUnderTheSameName(t *testing.T) {
	sched := podEvent("a", "job-worker-0", "u-old", corev1.EventTypeNormal, "Scheduled", "Successfully assigned a/job-worker-0 to n1", -time.Hour/2)
	in := Input{
		Events: []corev1.Event{
			sched,
			evicted("a", "job-worker-0", "u-old", GangPreempt, 0),
			groupEvicted("a", "job-pg", GangPreempt, 0, 1),
			released("a", "urgent-0", "u-urgent", "n1", 0),
		},
		Pods: []corev1.Pod{
			pod("a", "job-worker-0", "u-new", "job-pg", "n2", 5), // the new pod, elsewhere
			pod("a", "urgent-0", "u-urgent", "urgent", "", 500),
		},
		PodGroups: []schedulingv1beta1.PodGroup{group("a", "job-pg", "q1"), group("a", "urgent", "q1")},
	}
	ev := one(t, in)
	if ev.VictimUID != "u-old" || ev.Node != "n1" || ev.Group != "job-pg" || ev.For == nil || ev.For.Pod != "urgent-0" {
		t.Fatalf("%+v for %+v", ev, ev.For)
	}
	has(t, "evidence", ev.Evidence, "recreated under the same name")
}

// The preemptor's records may be in a namespace the user cannot read.
func TestUnreadableNamespaceSaidInWords(t *testing.T) {
	in := Input{
		Events:     []corev1.Event{evicted("a", "low-0", "u-low", Reclaim, 0)},
		Pods:       []corev1.Pod{pod("a", "low-0", "u-low", "low", "n1", 0)},
		Unreadable: []string{"events of namespaces other than a: forbidden"},
	}
	ev := one(t, in)
	has(t, "unknown", ev.Unknown, "a pod in a namespace you cannot read")
	if ev.Describe() != "<unknown: see -o wide>" {
		t.Errorf("describe: %s", ev.Describe())
	}
}

// The victim's event has expired, but the pod (kept by a finalizer) still
// carries the conditions defaultEvictor.Evict set.
func TestEventExpiredConditionsLeft(t *testing.T) {
	p := pod("a", "low-0", "u-low", "low", "n1", 0)
	p.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: EvictReason, Message: EvictMessagePrefix + Preempt},
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: PreemptionByScheduler, LastTransitionTime: at(0),
			Message: "volcano: preempting to accommodate a higher priority pod"},
	}
	ev := one(t, Input{Pods: []corev1.Pod{p}})
	if ev.Action != Preempt || !ev.Time.Equal(ptr.To(at(0))) {
		t.Fatalf("%+v", ev)
	}
	has(t, "unknown", ev.Unknown, "Evict event has expired")
}

// Only the PodGroup's aggregated event is left: one row for the pods not
// accounted for, saying so.
func TestOnlyTheGroupEventLeft(t *testing.T) {
	in := Input{Events: []corev1.Event{
		evicted("a", "g-0", "u0", GangPreempt, 0),
		groupEvicted("a", "g", GangPreempt, 0, 3),
	}, Pods: []corev1.Pod{pod("a", "g-0", "u0", "g", "n1", 0)}, PodGroups: []schedulingv1beta1.PodGroup{group("a", "g", "q")}}
	out := Evictions(in)
	if len(out) != 2 || out[1].Victim != "" || out[1].Count != 2 || out[1].Group != "g" {
		t.Fatalf("%+v", out)
	}
	has(t, "unknown", out[1].Unknown, "only its PodGroup's event is left")
}

func TestNodeOf(t *testing.T) {
	n, ok := NodeOf("Pod a/b can possibly be assigned to node-7, once resource is released and minAvailable is satisfied")
	if !ok || n != "node-7" {
		t.Fatalf("%q %v", n, ok)
	}
	if _, ok := NodeOf("Pod a/b can possibly be assigned to node-7, once minAvailable is satisfied"); ok {
		t.Fatal("an allocated pod's message is no preemptor's")
	}
}

// The preemptor of a first eviction is evicted in its turn (reclaim) and
// gone: its group, queue and priority come from its own eviction.
func TestPreemptorEvictedInItsTurn(t *testing.T) {
	sched := podEvent("a", "urgent-0", "u-urgent", corev1.EventTypeNormal, "Scheduled", "Successfully assigned a/urgent-0 to n1", 2*time.Second)
	in := Input{
		Events: []corev1.Event{
			podEvent("a", "batch-1", "u-batch", corev1.EventTypeNormal, "Scheduled", "Successfully assigned a/batch-1 to n1", -time.Hour/2),
			evicted("a", "batch-1", "u-batch", Preempt, 0),
			groupEvicted("a", "batch", Preempt, 0, 1),
			released("a", "urgent-0", "u-urgent", "n1", 0),
			sched,
			evicted("a", "urgent-0", "u-urgent", Reclaim, time.Minute),
			groupEvicted("a", "urgent", Reclaim, time.Minute, 1),
			released("b", "share-0", "u-share", "n1", time.Minute),
		},
		Pods:            []corev1.Pod{pod("b", "share-0", "u-share", "share", "n1", 10)},
		PodGroups:       []schedulingv1beta1.PodGroup{group("a", "batch", "qa"), group("a", "urgent", "qa"), group("b", "share", "qb")},
		PriorityClasses: map[string]int32{},
	}
	out := Evictions(in)
	if len(out) != 2 {
		t.Fatalf("%+v", out)
	}
	first := out[0]
	if first.Victim != "batch-1" || first.For == nil || first.For.Pod != "urgent-0" || first.For.Group != "urgent" || first.For.Queue != "qa" {
		t.Fatalf("first: %+v for %+v", first, first.For)
	}
	has(t, "evidence", first.For.Evidence, "from its own eviction (reclaim")
	if second := out[1]; second.Victim != "urgent-0" || second.Node != "n1" || second.For == nil || second.For.Pod != "share-0" {
		t.Fatalf("second: %+v for %+v", second, second.For)
	}
}

// With the preemptor's event gone, its condition still names the node;
// it carries no time of its own, so the link is by node alone, and says so.
func TestPreemptorConditionWithoutEvent(t *testing.T) {
	high := pod("a", "high-0", "u-high", "high", "", 1000)
	high.Status.NominatedNodeName = "n1"
	high.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "Pod a/high-0 can possibly be assigned to n1, once resource is released and minAvailable is satisfied", LastTransitionTime: at(-time.Hour)}}
	in := Input{Events: []corev1.Event{evicted("a", "low-0", "u-low", Preempt, 0)},
		Pods: []corev1.Pod{pod("a", "low-0", "u-low", "low", "n1", 1), high}}
	ev := one(t, in)
	if ev.For == nil || ev.For.Pod != "high-0" {
		t.Fatalf("%+v", ev)
	}
	has(t, "evidence", ev.For.Evidence, "linked by node alone")
	has(t, "evidence", ev.For.Evidence, "its PodScheduled condition")
}
