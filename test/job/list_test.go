package job

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// rows splits each non-empty line of a table into its columns.
func rows(out string) [][]string {
	var rs [][]string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l != "" {
			rs = append(rs, strings.Fields(l))
		}
	}
	return rs
}

// listJobs makes the jobs the list tests filter: two namespaces, two
// queues, several phases, labels.
func listJobs(t *testing.T, prefix string) (string, string) {
	a, b := namespace(t, prefix+"-a"), namespace(t, prefix+"-b")
	makeJob(t, a, "train", prefix+"-research", 4, batchv1alpha1.JobRunning)
	setStatus(t, a, "train", func(s *batchv1alpha1.JobStatus) {
		s.Pending, s.Running, s.Succeeded, s.Failed, s.RetryCount = 1, 2, 1, 0, 2
	})
	makeJob(t, a, "eval", prefix+"-prod", 1, batchv1alpha1.JobAborted)
	j, err := env.vc.BatchV1alpha1().Jobs(a).Create(context.Background(), jobSpec(a, "multi", prefix+"-research", map[string]int32{"ps": 1, "worker": 3}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j.Labels = map[string]string{"team": "nlp"}
	if _, err := env.vc.BatchV1alpha1().Jobs(a).Update(context.Background(), j, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	makeJob(t, b, "train", prefix+"-research", 1, batchv1alpha1.JobCompleted)
	return a, b
}

func TestList(t *testing.T) {
	a, b := listJobs(t, "job-list")
	r := mustVC(t, "job", "list", "-n", a)
	got := rows(r.Stdout)
	want := [][]string{
		{"NAME", "QUEUE", "PHASE", "MIN", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "RETRIES", "AGE"},
		{"eval", "job-list-prod", "Aborted", "1", "0", "0", "0", "0", "0"},
		{"multi", "job-list-research", "Pending", "4", "0", "0", "0", "0", "0"},
		{"train", "job-list-research", "Running", "4", "1", "2", "1", "0", "2"},
	}
	if len(got) != len(want) {
		t.Fatalf("job list -n %s:\n%s", a, r.Stdout)
	}
	for i := range want {
		n := len(want[i])
		if i > 0 {
			if len(got[i]) != n+1 { // + AGE
				t.Errorf("row %d: %v", i, got[i])
				continue
			}
		}
		if strings.Join(got[i][:n], " ") != strings.Join(want[i], " ") {
			t.Errorf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}

	check := func(args []string, wantNames ...string) {
		t.Helper()
		r := mustVC(t, append([]string{"job", "list", "--no-headers"}, args...)...)
		var names []string
		for _, row := range rows(r.Stdout) {
			if len(row) > 0 && row[0] == "NAME" {
				t.Errorf("%v: --no-headers printed a header", args)
			}
			if len(row) == 11 { // -A: NAMESPACE first
				names = append(names, row[0]+"/"+row[1])
			} else {
				names = append(names, row[0])
			}
		}
		if strings.Join(names, ",") != strings.Join(wantNames, ",") {
			t.Errorf("job list %v: got %v, want %v\n%s", args, names, wantNames, r.Stdout)
		}
	}
	check([]string{"-n", a, "--queue", "job-list-research"}, "multi", "train")
	check([]string{"-n", a, "--phase", "Aborted"}, "eval")
	check([]string{"-n", a, "--phase", "Pending"}, "multi")
	check([]string{"-n", a, "-l", "team=nlp"}, "multi")
	check([]string{"-n", a, "--queue", "job-list-research", "--phase", "Running"}, "train")
	check([]string{"-A", "--queue", "job-list-research"}, a+"/multi", a+"/train", b+"/train")
	check([]string{"-n", a, "train", "eval"}, "train", "eval")

	r = mustVC(t, "job", "list", "-n", a, "-o", "wide", "--phase", "Pending")
	if rs := rows(r.Stdout); len(rs) != 2 || rs[0][10] != "TASKS" || rs[0][11] != "SCHEDULER" || rs[1][10] != "ps=1,worker=3" || rs[1][11] != "volcano" {
		t.Errorf("-o wide:\n%s", r.Stdout)
	}
	r = mustVC(t, "job", "list", "-n", a, "-o", "name")
	if r.Stdout != "job.batch.volcano.sh/eval\njob.batch.volcano.sh/multi\njob.batch.volcano.sh/train\n" {
		t.Errorf("-o name:\n%s", r.Stdout)
	}
	r = mustVC(t, "job", "get", "train", "-n", b, "-o", "json")
	var l struct {
		Kind  string
		Items []batchv1alpha1.Job
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil || l.Kind != "List" || len(l.Items) != 1 ||
		l.Items[0].Kind != "Job" || l.Items[0].APIVersion != "batch.volcano.sh/v1alpha1" || l.Items[0].Status.State.Phase != batchv1alpha1.JobCompleted {
		t.Errorf("-o json (%v):\n%s", err, r.Stdout)
	}
	r = mustVC(t, "job", "list", "-n", a, "-o", "custom-columns=NAME:.metadata.name,PHASE:.status.state.phase", "--phase", "Aborted")
	if rows(r.Stdout)[1][0] != "eval" || rows(r.Stdout)[1][1] != "Aborted" {
		t.Errorf("custom-columns:\n%s", r.Stdout)
	}
	r = mustVC(t, "vj", "ls", "-n", a, "--phase", "Failed")
	if r.Stdout != "" || r.Stderr != "No jobs found in "+a+" namespace.\n" {
		t.Errorf("empty list:\n%s", r)
	}
}

func TestListBadInput(t *testing.T) {
	a, _ := listJobs(t, "job-list-bad")
	for _, tc := range []struct {
		want string
		args []string
	}{
		{`job "nope" not found in namespace "` + a + `"`, []string{"job", "list", "-n", a, "train", "nope"}},
		{`unknown --phase "Done"`, []string{"job", "list", "--phase", "Done"}},
		{`invalid --queue "Research"`, []string{"job", "list", "--queue", "Research"}},
		{`invalid --selector "=x"`, []string{"job", "list", "-l", "=x"}},
		{"names cannot be combined with --all-namespaces", []string{"job", "list", "-A", "train"}},
		{"give job names or --selector, not both", []string{"job", "list", "train", "-l", "a=b"}},
		{`invalid job name "Train"`, []string{"job", "get", "Train"}},
		{`unknown output format "table"`, []string{"job", "list", "-o", "table"}},
	} {
		mustFail(t, tc.want, tc.args...)
	}
}

// TestListWatch: --watch prints the list, then a row per change.
func TestListWatch(t *testing.T) {
	ns := namespace(t, "job-watch")
	makeJob(t, ns, "train", "research", 1, batchv1alpha1.JobPending)
	b := start(t, "job", "list", "-n", ns, "--watch", "--no-headers")
	poll(t, "the first row", func() (bool, error) { return strings.Contains(b.out.String(), "Pending"), nil })
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) { s.State.Phase, s.Running = batchv1alpha1.JobRunning, 1 })
	poll(t, "a row for the change", func() (bool, error) {
		rs := rows(b.out.String())
		// The second row may be read half written: wait for all of it.
		return len(rs) == 2 && len(rs[1]) > 5 && rs[1][2] == "Running" && rs[1][5] == "1", nil
	})
}

func TestDescribe(t *testing.T) {
	ns := namespace(t, "job-describe")
	ctx := context.Background()
	spec := jobSpec(ns, "train", "research", map[string]int32{"ps": 1, "worker": 2})
	spec.Spec.MinAvailable = 2
	spec.Spec.Tasks[1].MinAvailable = ptrTo(int32(1))
	spec.Spec.Policies = []batchv1alpha1.LifecyclePolicy{{Event: "PodEvicted", Action: "RestartJob"}}
	spec.Spec.Tasks[0].Policies = []batchv1alpha1.LifecyclePolicy{{Event: "TaskCompleted", Action: "CompleteJob"}}
	spec.Spec.Plugins = map[string][]string{"svc": {}, "env": {}}
	j, err := env.vc.BatchV1alpha1().Jobs(ns).Create(ctx, spec, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(time.Now().Add(-time.Minute))
	j = setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State = batchv1alpha1.JobState{Phase: batchv1alpha1.JobRunning, Reason: "MinAvailableReached", Message: "2 of 3 pods running"}
		s.Running, s.Pending, s.RetryCount, s.MinAvailable = 2, 1, 1, 2
		s.Conditions = []batchv1alpha1.JobCondition{{Status: batchv1alpha1.JobPending, LastTransitionTime: &now}, {Status: batchv1alpha1.JobRunning, LastTransitionTime: &now}}
	})
	// The PodGroup Volcano's job controller makes, controlled by the job.
	_, err = env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "train-" + string(j.UID), Namespace: ns, OwnerReferences: []metav1.OwnerReference{expectedRef(j)}},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 2, Queue: "research"},
		Status:     schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod(t, j, "ps", 0, "node-a", corev1.PodRunning)
	pod(t, j, "worker", 0, "node-b", corev1.PodRunning)
	pod(t, j, "worker", 1, "", corev1.PodPending)
	// A pod of another job is not this job's.
	other := makeJob(t, ns, "other", "research", 1, "")
	pod(t, other, "worker", 0, "node-c", corev1.PodRunning)
	_, err = env.kube.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "train.1", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch.volcano.sh/v1alpha1", Name: "train", Namespace: ns, UID: j.UID},
		Type:           "Normal", Reason: "CommandIssued", Message: "Start to execute command AbortJob",
		Source: corev1.EventSource{Component: "vc-controller-manager"}, LastTimestamp: now,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := mustVC(t, "job", "describe", "train", "-n", ns)
	lines := map[string]bool{}
	for _, l := range strings.Split(r.Stdout, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{
		"Name: train",
		"Namespace: " + ns,
		"Queue: research",
		"Scheduler: volcano",
		"Min Available: 2",
		"Max Retry: 3",
		"Plugins: env, svc",
		"Name Replicas Min Available Image Requests (per pod)",
		"ps 1 1 busybox:1.36 cpu=500m",
		"worker 2 1 busybox:1.36 cpu=500m",
		"Scope When Action",
		"<job> PodEvicted RestartJob",
		"ps TaskCompleted CompleteJob",
		"Phase: Running",
		"Reason: MinAvailableReached",
		"Message: 2 of 3 pods running",
		"Pods: pending 1, running 2, succeeded 0, failed 0, terminating 0, unknown 0",
		"Retries: 1 of 3",
		"Phase Since",
		"PodGroup: train-" + string(j.UID) + " (Running, minMember 2, queue research)",
		"Task Name Phase Node",
		"ps train-ps-0 Running node-a",
		"worker train-worker-0 Running node-b",
		"worker train-worker-1 Pending <none>",
		"Pending Commands: <none>",
	} {
		if !lines[want] {
			t.Errorf("describe lacks the line %q:\n%s", want, r.Stdout)
		}
	}
	if !strings.Contains(r.Stdout, "CommandIssued") || !strings.Contains(r.Stdout, "vc-controller-manager  Start to execute command AbortJob") {
		t.Errorf("describe lacks the job's event:\n%s", r.Stdout)
	}
	if strings.Contains(r.Stdout, "other-worker-0") {
		t.Errorf("describe shows another job's pod:\n%s", r.Stdout)
	}
	// The page ends with the analysis of 'why', in one line, pointing to it.
	if !strings.Contains(r.Stdout, "Why:") || !strings.Contains(r.Stdout, "kubectl vc why job train -n "+ns+")") {
		t.Errorf("describe does not end with why's summary:\n%s", r.Stdout)
	}
	// A pod being deleted (no kubelet here confirms it) shows as Terminating.
	if err := env.kube.CoreV1().Pods(ns).Delete(ctx, "train-worker-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = mustVC(t, "job", "describe", "train", "-n", ns)
	if !strings.Contains(strings.Join(strings.Fields(r.Stdout), " "), "worker train-worker-0 Terminating node-b") {
		t.Errorf("a deleted pod is not shown Terminating:\n%s", r.Stdout)
	}
	mustFail(t, `job "nope" not found in namespace "`+ns+`"`, "job", "describe", "nope", "-n", ns)
	mustFail(t, "name the job to describe", "job", "describe", "-n", ns)
	mustFail(t, "give one job name, got 2 (a b)", "job", "describe", "a", "b")
}

func ptrTo[T any](v T) *T { return &v }
