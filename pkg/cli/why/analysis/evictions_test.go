package analysis

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
)

func evictedJob(policies []batchv1alpha1.LifecyclePolicy, taskPolicies []batchv1alpha1.LifecyclePolicy, retry, maxRetry int32, phase batchv1alpha1.JobPhase) *Snapshot {
	j := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ns", UID: "uid-train"},
		Spec: batchv1alpha1.JobSpec{Queue: "q", MaxRetry: maxRetry, Policies: policies,
			Tasks: []batchv1alpha1.TaskSpec{{Name: "worker", Replicas: 1, Policies: taskPolicies}}},
		Status: batchv1alpha1.JobStatus{RetryCount: retry, State: batchv1alpha1.JobState{Phase: phase}}}
	ev := infer.Eviction{Time: metav1.NewTime(now.Add(-10 * 60e9)), Action: infer.Preempt, Namespace: "ns", Victim: "train-worker-0",
		VictimUID: "old", Group: "train-uid-train", Queue: "q", Node: "n1", Count: 1, Evidence: []string{"event Evict on pod ns/train-worker-0"},
		For: &infer.Preemptor{Inferred: true, Namespace: "ns", Pod: "urgent-0", Group: "urgent", Queue: "q", Priority: ptr.To[int32](1000), Evidence: []string{"same node n1"}}}
	pg := group("train-uid-train", "q", 1, "Running", "")
	p := pod("train-worker-0", "train-uid-train", "volcano")
	p.Spec.NodeName = "n2"
	return &Snapshot{Kind: Job, Namespace: "ns", Name: "train", Now: now, Job: j, PodGroup: &pg, Pods: []corev1.Pod{p},
		Queues: []schedulingv1beta1.Queue{queue("q", "root", "Open", "", "")}, VolcanoSchedulers: []string{"volcano"}, Evictions: []infer.Eviction{ev},
		Events: []corev1.Event{{InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "train", Namespace: "ns", UID: "uid-train"},
			Reason: ExecuteAction, Message: "Start to execute action RestartJob ", LastTimestamp: metav1.NewTime(now.Add(-9 * 60e9))}}}
}

func findReason(t *testing.T, rep Report, code Code) Reason {
	t.Helper()
	for _, r := range rep.Reasons {
		if r.Reason == code {
			return r
		}
	}
	t.Fatalf("no %s in %+v", code, rep.Reasons)
	return Reason{}
}

// A job evicted and running again: nothing blocks it, the history is told
// as notes.
func TestEvictedJobRunningAgain(t *testing.T) {
	s := evictedJob([]batchv1alpha1.LifecyclePolicy{{Event: PodEvictedEvent, Action: "RestartJob"}}, nil, 1, 0, batchv1alpha1.JobRunning)
	rep := Analyze(s)
	if rep.Blocked {
		t.Fatalf("blocked: %+v", rep.Reasons)
	}
	e := findReason(t, rep, Evicted)
	for _, want := range []string{"pod ns/train-worker-0 was evicted by Volcano's scheduler (preempt)", "on node n1", "pod ns/urgent-0 (group urgent, queue q, priority 1000) [inferred]"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message lacks %q: %s", want, e.Message)
		}
	}
	if e.Eviction == nil || e.Blocking {
		t.Errorf("%+v", e)
	}
	p := findReason(t, rep, EvictionPolicy)
	for _, want := range []string{"spec.policies[0]", "PodEvicted -> RestartJob", "retry count 1 of maxRetry 3 (the default)", "Running now"} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("policy lacks %q: %s", want, p.Message)
		}
	}
	if !strings.Contains(strings.Join(p.Evidence, "\n"), "Start to execute action RestartJob") {
		t.Errorf("evidence: %q", p.Evidence)
	}
}

// The task's policy comes before the job's, as applyPolicies reads them;
// an AbortJob policy has a fix.
func TestTaskPolicyFirst(t *testing.T) {
	s := evictedJob([]batchv1alpha1.LifecyclePolicy{{Event: AnyEvent, Action: "RestartJob"}},
		[]batchv1alpha1.LifecyclePolicy{{Events: []batchv1alpha1.Event{"PodFailed", PodEvictedEvent}, Action: "AbortJob"}}, 0, 3, batchv1alpha1.JobAborted)
	p := findReason(t, Analyze(s), EvictionPolicy)
	if !strings.Contains(p.Message, "spec.tasks[0].policies[0]") || !strings.Contains(p.Message, "AbortJob") || p.Fix == "" {
		t.Errorf("%+v", p)
	}
}

func TestNoPolicySyncsTheJob(t *testing.T) {
	got := PolicyOnEviction(&batchv1alpha1.Job{}, "")
	if got.Action != SyncJobAction || got.From != "" {
		t.Errorf("%+v", got)
	}
}

func TestMaxRetryReached(t *testing.T) {
	s := evictedJob([]batchv1alpha1.LifecyclePolicy{{Event: PodEvictedEvent, Action: "RestartJob"}}, nil, 2, 2, batchv1alpha1.JobFailed)
	p := findReason(t, Analyze(s), EvictionPolicy)
	if !strings.Contains(p.Message, "at maxRetry the job controller fails the job") {
		t.Errorf("%s", p.Message)
	}
}

// A pod is told the evictions of its name, whatever its UID.
func TestEvictedPod(t *testing.T) {
	s := evictedJob(nil, nil, 0, 0, batchv1alpha1.JobRunning)
	s.Kind, s.Name, s.Job, s.Pod = Pod, "train-worker-0", nil, &s.Pods[0]
	rep := Analyze(s)
	findReason(t, rep, Evicted)
	for _, r := range rep.Reasons {
		if r.Reason == EvictionPolicy {
			t.Errorf("a pod has no job policy: %+v", r)
		}
	}
}
