package joborder

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func names(jobs []Job) string {
	var s []string
	for _, j := range jobs {
		s = append(s, j.Name)
	}
	return strings.Join(s, ",")
}

func mustParse(t *testing.T, conf string) Config {
	t.Helper()
	c, err := Parse(conf, "test")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dur(d time.Duration) *time.Duration { return &d }

// Each case's want is what Session.JobOrderFn
// (pkg/scheduler/framework/session_plugins.go) gives: the enabled plugins'
// job orders in tier order (priority.go, gang.go, drf.go, sla.go
// jobOrderFn), then CreationTimestamp, then UID.
func TestSort(t *testing.T) {
	jobs := []Job{
		{Name: "old-low", UID: "u3", Created: t0, Priority: 10, MinMember: 1},
		{Name: "new-high", UID: "u2", Created: t0.Add(2 * time.Minute), Priority: 1000, MinMember: 1},
		{Name: "mid-high", UID: "u1", Created: t0.Add(time.Minute), Priority: 1000, MinMember: 1, ReadyPods: 1, Share: 0.5},
		{Name: "same-time-b", UID: "b", Created: t0.Add(3 * time.Minute), Priority: 10, MinMember: 2},
		{Name: "same-time-a", UID: "a", Created: t0.Add(3 * time.Minute), Priority: 10, MinMember: 2},
	}
	cases := []struct{ name, conf, want string }{
		// Volcano's DefaultSchedulerConf: priority, then gang (tier 1), drf (tier 2).
		{"default", "", "new-high,mid-high,old-low,same-time-a,same-time-b"},
		// Only gang orders: not ready before ready, then creation, then UID.
		{"gang only", "actions: enqueue\ntiers:\n- plugins:\n  - name: gang\n", "old-low,new-high,same-time-a,same-time-b,mid-high"},
		// priority disabled: gang first, then drf, then creation.
		{"priority disabled", "actions: enqueue\ntiers:\n- plugins:\n  - name: priority\n    enableJobOrder: false\n  - name: gang\n- plugins:\n  - name: drf\n", "old-low,new-high,same-time-a,same-time-b,mid-high"},
		// drf before priority (tier order): smaller share first, then priority.
		{"drf first", "actions: enqueue\ntiers:\n- plugins:\n  - name: drf\n- plugins:\n  - name: priority\n", "new-high,old-low,same-time-a,same-time-b,mid-high"},
		// No job-order plugin: creation time, then UID.
		{"none", "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: predicates\n", "old-low,mid-high,new-high,same-time-a,same-time-b"},
		// Every plugin disabled: the same.
		{"all disabled", "actions: enqueue\ntiers:\n- plugins:\n  - name: priority\n    enableJobOrder: false\n  - name: gang\n    enableJobOrder: false\n", "old-low,mid-high,new-high,same-time-a,same-time-b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conf := Default()
			if c.conf != "" {
				conf = mustParse(t, c.conf)
			}
			js := append([]Job(nil), jobs...)
			New(conf).Sort(js)
			if got := names(js); got != c.want {
				t.Errorf("order %s, want %s", got, c.want)
			}
		})
	}
}

// sla.go's jobOrderFn: jobs with a waiting time first, the earlier
// deadline (creation + waiting time) first; the plugin's argument is the
// waiting time of jobs without their own.
func TestSLA(t *testing.T) {
	jobs := []Job{
		{Name: "none", UID: "1", Created: t0},
		{Name: "long", UID: "2", Created: t0.Add(time.Minute), WaitingTime: dur(time.Hour)},
		{Name: "short", UID: "3", Created: t0.Add(2 * time.Minute), WaitingTime: dur(10 * time.Minute)},
	}
	o := New(mustParse(t, "actions: enqueue\ntiers:\n- plugins:\n  - name: sla\n"))
	o.Sort(jobs)
	if got := names(jobs); got != "short,long,none" {
		t.Errorf("order %s, want short,long,none", got)
	}
	if got := o.Explain(&jobs[1], &jobs[2]); !strings.Contains(got, "sla: waiting time 1h0m0s") {
		t.Errorf("Explain = %q", got)
	}
	// The global argument applies to a podgroup without its own annotation.
	g := New(mustParse(t, "actions: enqueue\ntiers:\n- plugins:\n  - name: sla\n    arguments:\n      sla-waiting-time: 5m\n"))
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(t0)}}
	if j := g.FromPodGroup(pg, nil, Priorities{}, nil); j.WaitingTime == nil || *j.WaitingTime != 5*time.Minute {
		t.Errorf("waiting time %v, want the plugin's 5m", j.WaitingTime)
	}
	pg.Annotations = map[string]string{SLAWaitingTimeAnnotation: "2m", SLAWaitingTime: "9m"}
	if j := g.FromPodGroup(pg, nil, Priorities{}, nil); *j.WaitingTime != 2*time.Minute {
		t.Errorf("waiting time %v, want the newer annotation's 2m", j.WaitingTime)
	}
	pg.Annotations = map[string]string{SLAWaitingTimeAnnotation: "-1s", SLAWaitingTime: "9m"}
	if j := g.FromPodGroup(pg, nil, Priorities{}, nil); *j.WaitingTime != 9*time.Minute {
		t.Errorf("waiting time %v, want the older annotation's 9m when the newer is invalid", j.WaitingTime)
	}
}

func TestNewListsPlugins(t *testing.T) {
	o := New(mustParse(t, `actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
    enableJobOrder: false
  - name: tdm
- plugins:
  - name: drf
  - name: my-plugin
  - name: proportion
  - name: sla
    enableJobOrder: true
`))
	if got := strings.Join(o.Plugins, ","); got != "priority,drf,sla" {
		t.Errorf("Plugins %s", got)
	}
	if got := strings.Join(o.Unknown, ","); got != "tdm,my-plugin" {
		t.Errorf("Unknown %s", got)
	}
	if got := strings.Join(o.Disabled, ","); got != "gang" {
		t.Errorf("Disabled %s", got)
	}
}

func TestParse(t *testing.T) {
	c := mustParse(t, "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n")
	if !c.HasAction("allocate") || len(c.Actions) != 3 || !*c.Tiers[0].Plugins[0].EnableJobOrder {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range []string{"tiers: [", "tiers:\n- plugins:\n  - name: gang\n"} {
		if _, err := Parse(bad, "configmap x"); err == nil || !strings.Contains(err.Error(), "configmap x") {
			t.Errorf("Parse(%q) = %v, want an error naming the source", bad, err)
		}
	}
	// Keys are case-sensitive, as the scheduler's own YAML reader: a
	// misspelt switch leaves the plugin on.
	c = mustParse(t, "actions: enqueue\ntiers:\n- plugins:\n  - name: priority\n    EnableJobOrder: false\n")
	if !*c.Tiers[0].Plugins[0].EnableJobOrder {
		t.Error("EnableJobOrder (wrong case) turned the plugin off")
	}
}

func TestFromPodGroup(t *testing.T) {
	prio := NewPriorities([]schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "normal"}, Value: 50, GlobalDefault: true},
	})
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"},
		Spec: schedulingv1beta1.PodGroupSpec{MinMember: 3, PriorityClassName: "high"}}
	req := func(cpu string) corev1.ResourceRequirements {
		if cpu == "" {
			return corev1.ResourceRequirements{}
		}
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	pod := func(phase corev1.PodPhase, node, cpu string) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Resources: req(cpu)}}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	pods := []corev1.Pod{
		pod(corev1.PodRunning, "n1", "2"),
		pod(corev1.PodPending, "n1", "1"), // bound
		pod(corev1.PodPending, "", "1"),   // pending
		pod(corev1.PodFailed, "n1", "5"),
	}
	total := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), corev1.ResourcePods: resource.MustParse("100")}
	o := New(Default())
	j := o.FromPodGroup(pg, pods, prio, total)
	if j.Priority != 1000 || j.ReadyPods != 2 || j.Ready() || j.Share != 0.3 || j.DominantResource != "cpu" {
		t.Errorf("job %+v", j)
	}
	// Two bound or running pods of minMember 2: the gang is placed.
	pg.Spec.MinMember = 2
	if j := o.FromPodGroup(pg, pods, prio, total); !j.Placed || !j.Ready() {
		t.Errorf("minMember 2: placed %v ready %v, want both", j.Placed, j.Ready())
	}
	pg.Spec.MinMember = 3
	// A pending pod that requests nothing counts as ready for gang.
	pods[2] = pod(corev1.PodPending, "", "")
	if j := o.FromPodGroup(pg, pods, prio, total); !j.Ready() {
		t.Errorf("with a best-effort pending pod: ready %d of %d, want ready", j.ReadyPods, j.MinMember)
	}
	// An unknown class, or none, takes the default class's value.
	pg.Spec.PriorityClassName = "missing"
	if p := prio.Of(pg); p != 50 {
		t.Errorf("priority of a missing class %d, want the default's 50", p)
	}
	if p := NewPriorities(nil).Of(pg); p != 0 {
		t.Errorf("priority without classes %d, want 0", p)
	}
}

func TestWants(t *testing.T) {
	rl := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	minRes := rl("2")
	pg := &schedulingv1beta1.PodGroup{Spec: schedulingv1beta1.PodGroupSpec{MinResources: &minRes}}
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "dev"},
		Spec:   schedulingv1beta1.QueueSpec{Capability: rl("4"), Deserved: rl("3")},
		Status: schedulingv1beta1.QueueStatus{Allocated: rl("1")}}
	got := Shorts(Wants(pg, q, rl("2"), nil, rl("1")))
	want := "cpu: needs 2, queue dev uses 3 of its capability 4; cpu: needs 2, the Ready nodes have 1 idle"
	if got != want {
		t.Errorf("Pending: %q\nwant %q", got, want)
	}
	pg.Status.Phase = schedulingv1beta1.PodGroupInqueue
	got = Shorts(Wants(pg, q, nil, rl("3"), rl("8")))
	if want := "cpu: needs 3, queue dev uses 1 of its deserved 3"; got != want {
		t.Errorf("Inqueue: %q\nwant %q", got, want)
	}
	if got := Wants(pg, q, nil, rl("1"), rl("8")); len(got) != 0 {
		t.Errorf("room enough: %v", got)
	}
}
