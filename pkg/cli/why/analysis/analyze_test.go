package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func rl(s string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if s == "" {
		return out
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

func lease(name string, renewedAgo time.Duration) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "volcano-system"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name + "-0"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: now.Add(-renewedAgo)}}}
}

func queue(name, parent string, state schedulingv1beta1.QueueState, capability, allocated string) schedulingv1beta1.Queue {
	return schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:   schedulingv1beta1.QueueSpec{Weight: 1, Parent: parent, Capability: rl(capability)},
		Status: schedulingv1beta1.QueueStatus{State: state, Allocated: rl(allocated)}}
}

func group(name, q string, minMember int32, phase schedulingv1beta1.PodGroupPhase, minRes string) schedulingv1beta1.PodGroup {
	pg := schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:   schedulingv1beta1.PodGroupSpec{MinMember: minMember, Queue: q},
		Status: schedulingv1beta1.PodGroupStatus{Phase: phase}}
	if minRes != "" {
		pg.Spec.MinResources = ptr.To(rl(minRes))
	}
	return pg
}

func pod(name, group, scheduler string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Annotations: map[string]string{keys.KubeGroupName: group}},
		Spec: corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: rl("cpu=1")}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
}

func node(name, allocatable string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Allocatable: rl(allocatable),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// base is a healthy cluster: Volcano's scheduler and serve run, queues
// root and default are Open, one node of 8 CPUs, and podgroup ns/train
// (minMember 2, minResources cpu=2) in queue default with its two pods.
func base() *Snapshot {
	pg := group("train", "default", 2, schedulingv1beta1.PodGroupPending, "cpu=2")
	return &Snapshot{
		Kind: PodGroup, Namespace: "ns", Name: "train", Now: now,
		PodGroup:  &pg,
		Pods:      []corev1.Pod{pod("train-0", "train", "volcano"), pod("train-1", "train", "volcano")},
		PodGroups: []schedulingv1beta1.PodGroup{pg},
		Queues: []schedulingv1beta1.Queue{
			queue("root", "", schedulingv1beta1.QueueStateOpen, "", ""),
			queue("default", "root", schedulingv1beta1.QueueStateOpen, "", ""),
		},
		Nodes:             []corev1.Node{node("n1", "cpu=8,memory=16Gi")},
		VolcanoSchedulers: []string{"volcano"},
		Schedulers: map[string]SchedulerSeen{
			"volcano":           {Lease: lease("volcano", 2*time.Second), LeaseName: "volcano-system/volcano"},
			"default-scheduler": {LeaseName: "kube-system/kube-scheduler"},
		},
		ServeLease:           lease("kubectl-vc-serve", time.Second),
		ControllersNamespace: "volcano-system",
	}
}

// sync keeps s.PodGroup and its copy in s.PodGroups the same.
func sync(s *Snapshot) {
	for i := range s.PodGroups {
		if s.PodGroup != nil && s.PodGroups[i].Name == s.PodGroup.Name && s.PodGroups[i].Namespace == s.PodGroup.Namespace {
			s.PodGroups[i] = *s.PodGroup
		}
	}
}

func find(r Report, code Code) *Reason {
	for i := range r.Reasons {
		if r.Reasons[i].Reason == code {
			return &r.Reasons[i]
		}
	}
	return nil
}

func TestAnalyze(t *testing.T) {
	cases := []struct {
		name   string
		change func(s *Snapshot)
		want   []Code // the blocking codes, in order
		check  func(t *testing.T, r Report)
	}{
		{name: "nothing blocks", change: func(s *Snapshot) {}, want: nil, check: func(t *testing.T, r Report) {
			if len(r.Checked) == 0 {
				t.Error("nothing reported as checked")
			}
		}},
		{name: "scheduler typo", change: func(s *Snapshot) {
			for i := range s.Pods {
				s.Pods[i].Spec.SchedulerName = "vocalno"
			}
		}, want: []Code{SchedulerUnknown}, check: func(t *testing.T, r Report) {
			if x := find(r, SchedulerUnknown); !strings.Contains(x.Message, `did you mean "volcano"`) || !strings.Contains(x.Fix, "schedulerName: volcano") {
				t.Errorf("no suggestion: %+v", x)
			}
		}},
		{name: "volcano scheduler lease expired", change: func(s *Snapshot) {
			s.Schedulers["volcano"] = SchedulerSeen{Lease: lease("volcano", 10*time.Minute), LeaseName: "volcano-system/volcano"}
		}, want: []Code{SchedulerNotRunning}, check: func(t *testing.T, r Report) {
			if x := find(r, SchedulerNotRunning); !strings.Contains(strings.Join(x.Evidence, ";"), "expired") {
				t.Errorf("evidence: %v", x.Evidence)
			}
		}},
		{name: "no lease but recent events: runs", change: func(s *Snapshot) {
			s.Schedulers["volcano"] = SchedulerSeen{LeaseName: "volcano-system/volcano", LastEvent: now.Add(-time.Minute)}
		}},
		{name: "no lease, no events", change: func(s *Snapshot) {
			s.Schedulers["volcano"] = SchedulerSeen{LeaseName: "volcano-system/volcano", Probed: true}
		}, want: []Code{SchedulerNotRunning}, check: func(t *testing.T, r Report) {
			if x := find(r, SchedulerNotRunning); !strings.Contains(strings.Join(x.Evidence, ";"), `no event from "volcano"`) {
				t.Errorf("evidence: %v", x.Evidence)
			}
		}},
		{name: "minMember above the pods", change: func(s *Snapshot) {
			s.PodGroup.Spec.MinMember = 4
			sync(s)
		}, want: []Code{NotEnoughPods}, check: func(t *testing.T, r Report) {
			if x := find(r, NotEnoughPods); !strings.Contains(x.Message, "minMember is 4 but only 2 pod(s) exist") {
				t.Errorf("message: %s", x.Message)
			}
		}},
		{name: "queue missing", change: func(s *Snapshot) {
			s.PodGroup.Spec.Queue = "nope"
			sync(s)
		}, want: []Code{QueueMissing}},
		{name: "queue closed by parent", change: func(s *Snapshot) {
			s.PodGroup.Spec.Queue = "child"
			sync(s)
			p := queue("team", "root", schedulingv1beta1.QueueStateClosed, "", "")
			c := queue("child", "team", schedulingv1beta1.QueueStateClosed, "", "")
			c.Annotations = map[string]string{keys.ClosedByParent: "true"}
			s.Queues = append(s.Queues, p, c)
		}, want: []Code{QueueClosed, ParentQueueClosed}, check: func(t *testing.T, r Report) {
			x := find(r, QueueClosed)
			if !strings.Contains(x.Message, "closed by its parent team") || !strings.Contains(x.Fix, "queue open team") {
				t.Errorf("%+v", x)
			}
		}},
		{name: "queue closed by a pending Command", change: func(s *Snapshot) {
			s.Queues[1].Status.State = schedulingv1beta1.QueueStateClosing
			s.Commands = []busv1alpha1.Command{{ObjectMeta: metav1.ObjectMeta{Name: "default-closequeue-x", Namespace: "default", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
				Action: "CloseQueue", TargetObject: &metav1.OwnerReference{Kind: "Queue", Name: "default"}}}
		}, want: []Code{QueueClosed}, check: func(t *testing.T, r Report) {
			if x := find(r, QueueClosed); !strings.Contains(x.Message, "by Command default/default-closequeue-x") {
				t.Errorf("%+v", x)
			}
		}},
		{name: "not a leaf", change: func(s *Snapshot) {
			s.Queues = append(s.Queues, queue("sub", "default", schedulingv1beta1.QueueStateOpen, "", ""))
		}, want: []Code{QueueNotLeaf}},
		{name: "capability reached", change: func(s *Snapshot) {
			s.Queues[1].Spec.Capability = rl("cpu=4")
			s.Queues[1].Status.Allocated = rl("cpu=3")
		}, want: []Code{QueueCapabilityReached}, check: func(t *testing.T, r Report) {
			x := find(r, QueueCapabilityReached)
			if len(x.Resources) != 1 || x.Resources[0] != (ResourceUse{Resource: "cpu", Needed: "2", Used: "3", Allocated: "3", Inqueue: "0", Limit: "4"}) {
				t.Errorf("resources: %+v", x.Resources)
			}
		}},
		{name: "Inqueue podgroups count", change: func(s *Snapshot) {
			s.Queues[1].Spec.Capability = rl("cpu=4")
			s.Queues[1].Status.Allocated = rl("cpu=1")
			s.PodGroups = append(s.PodGroups, group("other", "default", 1, schedulingv1beta1.PodGroupInqueue, "cpu=2"))
		}, want: []Code{QueueCapabilityReached}},
		{name: "dead Inqueue podgroup holds the queue", change: func(s *Snapshot) {
			s.Queues[1].Spec.Capability = rl("cpu=4")
			dead := group("done", "default", 1, schedulingv1beta1.PodGroupInqueue, "cpu=3")
			dead.Status.Succeeded = 1
			s.PodGroups = append(s.PodGroups, dead)
		}, want: []Code{QueueCapabilityReached, StalePodGroups}},
		{name: "parent capability reached", change: func(s *Snapshot) {
			s.Queues = append(s.Queues, queue("team", "root", schedulingv1beta1.QueueStateOpen, "cpu=4", "cpu=4"),
				queue("leaf", "team", schedulingv1beta1.QueueStateOpen, "", ""))
			s.PodGroup.Spec.Queue = "leaf"
			sync(s)
		}, want: []Code{ParentCapabilityReached}},
		{name: "minResources over capability", change: func(s *Snapshot) {
			s.Queues[1].Spec.Capability = rl("cpu=1")
		}, want: []Code{MinResourcesOverCapability}},
		{name: "minResources over the cluster", change: func(s *Snapshot) {
			s.PodGroup.Spec.MinResources = ptr.To(rl("cpu=2,nvidia.com/gpu=1"))
			sync(s)
		}, want: []Code{MinResourcesOverCluster}, check: func(t *testing.T, r Report) {
			x := find(r, MinResourcesOverCluster)
			if len(x.Resources) != 1 || x.Resources[0].Resource != "nvidia.com/gpu" || x.Resources[0].Limit != "0" {
				t.Errorf("%+v", x.Resources)
			}
		}},
		{name: "over deserved while others wait", change: func(s *Snapshot) {
			s.Queues[1].Spec.Deserved = rl("cpu=2")
			s.Queues[1].Status.Allocated = rl("cpu=3")
			s.Queues = append(s.Queues, queue("other", "root", schedulingv1beta1.QueueStateOpen, "", ""))
			s.PodGroups = append(s.PodGroups, group("waits", "other", 1, schedulingv1beta1.PodGroupPending, ""))
		}, want: []Code{QueueOverDeserved}},
		{name: "over deserved, nobody waits", change: func(s *Snapshot) {
			s.Queues[1].Spec.Deserved = rl("cpu=2")
			s.Queues[1].Status.Allocated = rl("cpu=3")
		}},
		{name: "gang condition", change: func(s *Snapshot) {
			s.PodGroup.Spec.MinMember = 2
			s.PodGroup.Status.Phase = schedulingv1beta1.PodGroupInqueue
			s.PodGroup.Status.Conditions = []schedulingv1beta1.PodGroupCondition{{Type: "Unschedulable", Status: corev1.ConditionTrue, Reason: "NotEnoughResources",
				Message:            "1/2 tasks in gang unschedulable: pod group is not ready, 2 Pending, 2 minAvailable; Pending: 1 Schedulable, 1 Unschedulable. Origin reason is train-1: 0/1 nodes are available: 1 Insufficient cpu.",
				LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}}
			sync(s)
		}, want: []Code{Unschedulable}, check: func(t *testing.T, r Report) {
			x := find(r, Unschedulable)
			if *x.Gang != (Gang{MinMember: 2, Pods: 2, Placeable: 1, Unplaceable: 1}) || !strings.Contains(x.Message, "needs 2 pods at once (minMember), 1 can be placed") ||
				!strings.Contains(x.Message, "Insufficient cpu") {
				t.Errorf("%+v %+v", x, x.Gang)
			}
		}},
		{name: "scheduler events only", change: func(s *Snapshot) {
			s.Events = []corev1.Event{{InvolvedObject: corev1.ObjectReference{Kind: "PodGroup", Name: "train"}, Type: "Normal", Reason: "Unschedulable",
				Message: "queue resource quota insufficient: insufficient cpu", Source: corev1.EventSource{Component: "volcano"}, LastTimestamp: metav1.NewTime(now.Add(-time.Minute))}}
		}, want: []Code{SchedulerEvents}},
		{name: "running group: nothing blocks", change: func(s *Snapshot) {
			s.PodGroup.Status.Phase = schedulingv1beta1.PodGroupRunning
			s.Queues[1].Status.State = schedulingv1beta1.QueueStateClosed
			sync(s)
		}, check: func(t *testing.T, r Report) {
			if x := find(r, QueueClosed); x == nil || x.Blocking {
				t.Errorf("closed queue of a running group: %+v", x)
			}
		}},
		{name: "no ready node", change: func(s *Snapshot) { s.Nodes = nil }, want: []Code{NoReadyNodes}},
		// Nodes that could not be read are not "no node": NotChecked
		// says so, and nothing blocks on a guess.
		{name: "nodes not readable", change: func(s *Snapshot) {
			s.Nodes = nil
			s.Unreadable = []Unreadable{{What: "nodes", Error: "forbidden"}}
		}, check: func(t *testing.T, r Report) {
			if x := find(r, NotChecked); x == nil || x.Blocking {
				t.Errorf("NotChecked: %+v", x)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			c.change(s)
			r := Analyze(s)
			if got := r.Blocking(); !slices.Equal(got, c.want) {
				t.Errorf("blocking %v, want %v\n%+v", got, c.want, r.Reasons)
			}
			if r.Blocked != (len(c.want) > 0) {
				t.Errorf("blocked %v", r.Blocked)
			}
			for i := 1; i < len(r.Reasons); i++ {
				if r.Reasons[i].Blocking && !r.Reasons[i-1].Blocking {
					t.Errorf("blocking reason after a note: %+v", r.Reasons)
				}
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestAnalyzePod(t *testing.T) {
	cases := []struct {
		name   string
		change func(s *Snapshot)
		want   []Code
	}{
		{name: "group in its namespace", change: func(s *Snapshot) {}},
		{name: "group in another namespace", change: func(s *Snapshot) {
			s.PodGroups[0].Namespace = "elsewhere"
		}, want: []Code{PodGroupInOtherNamespace}},
		{name: "group missing", change: func(s *Snapshot) { s.PodGroups = nil }, want: []Code{PodGroupMissing}},
		{name: "no group, no controller", change: func(s *Snapshot) {
			delete(s.Pod.Annotations, keys.KubeGroupName)
			s.ServeLease = nil
			s.Pods = []corev1.Pod{*s.Pod}
		}, want: []Code{PodGroupControllerNotRunning}},
		{name: "job pod, job controller not running", change: func(s *Snapshot) {
			s.Pod.Labels = map[string]string{batchv1alpha1.JobNameLabel: "train"}
			s.PodGroups = nil
		}, want: []Code{PodGroupControllerNotRunning}},
		{name: "placed on a node", change: func(s *Snapshot) {
			s.Pod.Spec.NodeName = "n1"
			s.Queues[1].Status.State = schedulingv1beta1.QueueStateClosed
		}},
		{name: "default scheduler without group", change: func(s *Snapshot) {
			delete(s.Pod.Annotations, keys.KubeGroupName)
			s.Pod.Spec.SchedulerName = ""
			s.Schedulers["default-scheduler"] = SchedulerSeen{Lease: lease("kube-scheduler", time.Second), LeaseName: "kube-system/kube-scheduler"}
			s.Pods = []corev1.Pod{*s.Pod}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base()
			s.Kind, s.Name = Pod, "train-0"
			s.Pod = &s.Pods[0]
			s.PodGroup = nil
			c.change(s)
			r := Analyze(s)
			if got := r.Blocking(); !slices.Equal(got, c.want) {
				t.Errorf("blocking %v, want %v\n%+v", got, c.want, r.Reasons)
			}
		})
	}
}

func TestAnalyzeJobWithoutGroup(t *testing.T) {
	s := base()
	s.Kind, s.Name = Job, "train"
	s.Job = &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ns", UID: "j1"}, Spec: batchv1alpha1.JobSpec{SchedulerName: "volcano"}}
	s.PodGroup, s.PodGroups, s.Pods = nil, nil, nil
	if got := Analyze(s).Blocking(); !slices.Equal(got, []Code{PodGroupControllerNotRunning}) {
		t.Errorf("no Volcano controllers: %v", got)
	}
	s.VolcanoControllerLease = lease("vc-controller-manager", time.Second)
	if got := Analyze(s).Blocking(); !slices.Equal(got, []Code{PodGroupMissing}) {
		t.Errorf("Volcano controllers run: %v", got)
	}
}

func TestAnalyzeQueue(t *testing.T) {
	s := base()
	s.Kind, s.Namespace, s.Name = Queue, "", "default"
	s.PodGroup, s.Pods = nil, nil
	r := Analyze(s)
	if got := r.Blocking(); !slices.Equal(got, []Code{PodGroupsWaiting}) || r.Status != "Open" {
		t.Errorf("a podgroup waits: %v %s", got, r.Status)
	}
	s.PodGroups[0].Status.Phase = schedulingv1beta1.PodGroupRunning
	s.Queues[1].Spec.Capability = rl("cpu=4")
	s.Queues[1].Status.Allocated = rl("cpu=4")
	if got := Analyze(s).Blocking(); len(got) != 0 {
		t.Errorf("nothing waits: %v", got)
	}
	s.PodGroups = append(s.PodGroups, group("next", "default", 1, schedulingv1beta1.PodGroupPending, "cpu=1"))
	if got := Analyze(s).Blocking(); !slices.Equal(got, []Code{QueueCapabilityReached, PodGroupsWaiting}) {
		t.Errorf("full with work waiting: %v", got)
	}
	s.Queues[1].Status.State = schedulingv1beta1.QueueStateClosing
	done := group("done", "default", 1, schedulingv1beta1.PodGroupCompleted, "cpu=1")
	s.PodGroups = []schedulingv1beta1.PodGroup{done}
	if got := Analyze(s).Blocking(); !slices.Equal(got, []Code{QueueClosed, StalePodGroups}) {
		t.Errorf("Closing, held by a Completed podgroup: %v", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"vocalno", "volcano", 2}, {"", "abc", 3}, {"volcano", "volcano", 0}, {"volcan", "volcano", 1}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("%s %s: %d want %d", c.a, c.b, got, c.d)
		}
	}
}
