package evictions

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
)

// A Volcano Job whose pod was preempted, restarted by its PodEvicted ->
// RestartJob policy and running again: 'why' exits 0 and tells the
// history as NOTEs: the eviction, for whom, the policy that fired, the
// retry count against maxRetry and what the job controller did.
func TestWhyJobEvictedAndRunningAgain(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns("a"), w.queue("q")
	n1, n2 := w.node("n1"), w.node("n2")
	low, high := w.class("low", 1), w.class("high", 100)
	ctx := context.Background()
	job, err := env.vc.BatchV1alpha1().Jobs(ns).Create(ctx, &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns},
		Spec: batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: q, MinAvailable: 1, MaxRetry: 3, PriorityClassName: low,
			Policies: []batchv1alpha1.LifecyclePolicy{{Event: analysis.PodEvictedEvent, Action: "RestartJob"}},
			Tasks: []batchv1alpha1.TaskSpec{{Name: "worker", Replicas: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "worker", Image: "busybox:1.36"}}}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The job controller's PodGroup (named JOB-UID, controlled by the
	// job) and pod (JOB-TASK-INDEX, controlled by the job, labelled).
	pgName := "train-" + string(job.UID)
	owner := metav1.NewControllerRef(job, batchv1alpha1.SchemeGroupVersion.WithKind("Job"))
	pg, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: pgName, Namespace: ns, OwnerReferences: []metav1.OwnerReference{*owner}},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: q, PriorityClassName: low},
		Status:     schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	jobPod := func() *corev1.Pod {
		p := pod(t, ns, "train-worker-0", pg.Name, low)
		p.OwnerReferences = []metav1.OwnerReference{*owner}
		p.Labels = map[string]string{batchv1alpha1.JobNameLabel: "train", batchv1alpha1.TaskSpecLabel: "worker"}
		p.Annotations[batchv1alpha1.TaskSpecLabel] = "worker"
		p, err := env.kube.CoreV1().Pods(ns).Update(ctx, p, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := bind(t, jobPod(), n1)
	group(t, ns, "urgent", q, high, 1, schedulingv1beta1.PodGroupInqueue)
	preemptor := pod(t, ns, "urgent-0", "urgent", high)

	evict(t, old, infer.Preempt)
	pipelined(t, preemptor, n1)
	// The job controller: PodEvicted -> RestartJob (jobcontroller's
	// processNextReq records "Start to execute action RestartJob " on the
	// Job; the Running state's Execute counts the retry), then the pod
	// is created again under its name and runs elsewhere.
	record(t, job, "Job", batchv1alpha1.SchemeGroupVersion.String(), corev1.EventTypeNormal, analysis.ExecuteAction, "Start to execute action RestartJob ")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := env.vc.BatchV1alpha1().Jobs(ns).Get(ctx, "train", metav1.GetOptions{})
		if err != nil {
			return err
		}
		j.Status.RetryCount = 1
		j.Status.MinAvailable, j.Status.Running = 1, 1
		j.Status.State = batchv1alpha1.JobState{Phase: batchv1alpha1.JobRunning, LastTransitionTime: metav1.Now()}
		_, err = env.vc.BatchV1alpha1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	recreated := bind(t, jobPod(), n2)
	if recreated.UID == old.UID {
		t.Fatal("the recreated pod has the old UID")
	}

	l := list(t, "-n", ns, "-o", "wide")
	if len(l.Items) != 1 || l.Items[0].Group != pgName {
		t.Errorf("evictions: %+v", l.Items)
	}
	rep := why(t, "job", "train", "-n", ns)
	e := reasonOf(t, rep, analysis.Evicted)
	contains(t, "Evicted", e.Message, "pod "+ns+"/train-worker-0 was evicted by Volcano's scheduler (preempt)", "on node "+n1,
		"pod "+ns+"/urgent-0 (group urgent, queue "+q+", priority 100) [inferred]")
	if e.Eviction == nil || e.Eviction.VictimUID != old.UID {
		t.Errorf("eviction: %+v", e.Eviction)
	}
	p := reasonOf(t, rep, analysis.EvictionPolicy)
	contains(t, "EvictionPolicy", p.Message, "spec.policies[0]", "PodEvicted -> RestartJob", "retry count 1 of maxRetry 3", "Running now")
	contains(t, "EvictionPolicy evidence", strings.Join(p.Evidence, "\n"), "Start to execute action RestartJob")

	for _, args := range [][]string{{"pod", "train-worker-0", "-n", ns}, {"podgroup", pgName, "-n", ns}} {
		reasonOf(t, why(t, args...), analysis.Evicted)
	}
	text := env.cli.MustVC(t, "why", "job", "train", "-n", ns)
	contains(t, "why text", text.Stdout, "NOTE  Evicted", "NOTE  EvictionPolicy")
}

// why runs 'why ARGS -o json' as the admin, wants exit 0 (nothing blocks
// a running object) and returns the report.
func why(t *testing.T, args ...string) analysis.Report {
	t.Helper()
	r := env.cli.VC(t, append(append([]string{"why"}, args...), "-o", "json")...)
	if r.Code != 0 {
		t.Fatalf("why %v: want exit 0:\n%s", args, r)
	}
	var rep analysis.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("why %v -o json: %v\n%s", args, err, r)
	}
	text := env.cli.VC(t, append([]string{"why"}, args...)...)
	t.Logf("$ kubectl vc why %s\n%s%s", strings.Join(args, " "), text.Stdout, text.Stderr)
	return rep
}

func reasonOf(t *testing.T, rep analysis.Report, code analysis.Code) analysis.Reason {
	t.Helper()
	for _, r := range rep.Reasons {
		if r.Reason == code {
			if r.Blocking {
				t.Errorf("%s blocks: %+v", code, r)
			}
			return r
		}
	}
	t.Fatalf("no %s in %+v", code, rep.Reasons)
	return analysis.Reason{}
}
