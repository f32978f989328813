package job

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func jobIn(phase batchv1alpha1.JobPhase, retries int32) *batchv1alpha1.Job {
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "ns", UID: "u-1"},
		Spec:       batchv1alpha1.JobSpec{MaxRetry: 3},
		Status:     batchv1alpha1.JobStatus{State: batchv1alpha1.JobState{Phase: phase}, RetryCount: retries},
	}
}

// TestAcceptedPhases: the phases in which each request is written follow
// Volcano's job state machine (pkg/controllers/job/state): AbortJob and
// TerminateJob and RestartJob act on Pending and Running jobs (a job
// without a phase is Pending), ResumeJob on Aborting and Aborted ones;
// in every other phase the controller drops the Command.
func TestAcceptedPhases(t *testing.T) {
	accepted := map[string][]batchv1alpha1.JobPhase{
		"suspend":   {"", batchv1alpha1.JobPending, batchv1alpha1.JobRunning},
		"terminate": {"", batchv1alpha1.JobPending, batchv1alpha1.JobRunning},
		"restart":   {"", batchv1alpha1.JobPending, batchv1alpha1.JobRunning},
		"resume":    {batchv1alpha1.JobAborting, batchv1alpha1.JobAborted},
	}
	for _, op := range []operation{suspendOp, resumeOp, restartOp, terminateOp} {
		for _, p := range append([]batchv1alpha1.JobPhase{""}, phases...) {
			want := false
			for _, a := range accepted[op.verb] {
				want = want || a == p
			}
			err := op.check(jobIn(p, 0))
			if (err == nil) != want {
				t.Errorf("%s of a %q job: err %v, want accepted=%v", op.verb, p, err, want)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "cannot "+op.verb+` job "train": it is `) {
				t.Errorf("%s: message %q", op.verb, err)
			}
		}
	}
}

// TestJudge walks each request through what Volcano's job controller
// does: take the Command (delete it), write the phases on the way, reach
// the target, or drop the Command in a phase it does not act in.
func TestJudge(t *testing.T) {
	w := watched{name: "train", command: "train-x-abcde", startRetries: 0}
	type step struct {
		job     *batchv1alpha1.Job
		pending bool
		want    verdict
		line    string
	}
	cases := map[string]struct {
		op    operation
		steps []step
	}{
		"suspend": {suspendOp, []step{
			{jobIn(batchv1alpha1.JobRunning, 0), true, waiting, "Running, Command train-x-abcde waiting for a job controller"},
			{jobIn(batchv1alpha1.JobRunning, 0), false, waiting, "Running, Command taken by the job controller"},
			{jobIn(batchv1alpha1.JobAborting, 0), false, waiting, "Aborting"},
			{jobIn(batchv1alpha1.JobAborted, 0), false, done, "Aborted"},
		}},
		"suspend of a job that completed first": {suspendOp, []step{
			{jobIn(batchv1alpha1.JobCompleted, 0), true, waiting, "Completed, Command train-x-abcde waiting for a job controller"},
			{jobIn(batchv1alpha1.JobCompleted, 0), false, refused, `job "train" is Completed: the job controller took the AbortJob Command without acting on it (only a Pending or Running job can be suspended)`},
		}},
		"resume": {resumeOp, []step{
			{jobIn(batchv1alpha1.JobAborted, 0), false, waiting, "Aborted, Command taken by the job controller"},
			{jobIn(batchv1alpha1.JobRestarting, 1), false, waiting, "Restarting"},
			{jobIn(batchv1alpha1.JobPending, 1), false, done, "Pending"},
		}},
		"restart": {restartOp, []step{
			{jobIn(batchv1alpha1.JobRunning, 0), false, waiting, "Running, Command taken by the job controller"},
			{jobIn(batchv1alpha1.JobRestarting, 1), false, waiting, "Restarting"},
			{jobIn(batchv1alpha1.JobRunning, 1), false, done, "Running"},
		}},
		"restart out of retries": {restartOp, []step{
			{jobIn(batchv1alpha1.JobFailed, 3), false, refused, `job "train" Failed instead of being restarted (Pending or Running again): it ran out of retries (retried 3 times, maxRetry 3)`},
		}},
		"restart dropped while suspended": {restartOp, []step{
			{jobIn(batchv1alpha1.JobAborted, 0), false, refused, `job "train" is Aborted: the job controller took the RestartJob Command without acting on it (it is suspended: resume it instead ('kubectl vc job resume'))`},
		}},
		"terminate": {terminateOp, []step{
			{jobIn(batchv1alpha1.JobPending, 0), true, waiting, "Pending, Command train-x-abcde waiting for a job controller"},
			{jobIn(batchv1alpha1.JobTerminating, 0), false, waiting, "Terminating"},
			{jobIn(batchv1alpha1.JobTerminated, 0), false, done, "Terminated"},
		}},
		"deleted": {terminateOp, []step{
			{nil, false, refused, `job "train" was deleted while waiting for it to be Terminated`},
		}},
	}
	for name, tc := range cases {
		for i, s := range tc.steps {
			v, line := tc.op.judge(w, s.job, s.pending)
			if v != s.want || line != s.line {
				t.Errorf("%s, step %d: got (%d, %q), want (%d, %q)", name, i, v, line, s.want, s.line)
			}
		}
	}
}

func TestDescribePhase(t *testing.T) {
	j := jobIn(batchv1alpha1.JobAborting, 0)
	j.Status.Running, j.Status.Terminating = 1, 2
	if got := describePhase(j); got != "Aborting, 3 pod(s) still pending, running or terminating" {
		t.Errorf("Aborting: %q", got)
	}
	j = jobIn(batchv1alpha1.JobRunning, 0)
	j.Status.Running, j.Status.Pending = 2, 1
	if got := describePhase(j); got != "Running (2 running, 1 pending)" {
		t.Errorf("Running: %q", got)
	}
	if got := describePhase(jobIn("", 0)); got != "Pending" {
		t.Errorf("no phase: %q", got)
	}
}

// TestNewJobCommand: the Command as vcctl's CreateJobCommand builds it.
func TestNewJobCommand(t *testing.T) {
	cm := newJobCommand(jobIn(batchv1alpha1.JobRunning, 0), busv1alpha1.RestartJobAction)
	ref := metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "train", UID: "u-1",
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	want := &busv1alpha1.Command{
		ObjectMeta:   metav1.ObjectMeta{GenerateName: "train-restartjob-", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{ref}},
		Action:       "RestartJob",
		TargetObject: &ref,
	}
	if !reflect.DeepEqual(cm, want) {
		t.Errorf("got %+v\nwant %+v", cm, want)
	}
	if cm.TargetObject == &cm.OwnerReferences[0] {
		t.Errorf("target and owner reference share memory")
	}
}

func TestBuildJob(t *testing.T) {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	j := buildJob("train", "ns", "busybox", []string{"sleep", "1"}, []string{"-x"}, 4, 0, "research", "volcano", req, corev1.ResourceList{})
	if j.Spec.MinAvailable != 4 || *j.Spec.Tasks[0].MinAvailable != 4 {
		t.Errorf("--min 0 must mean all pods: job %d, task %d", j.Spec.MinAvailable, *j.Spec.Tasks[0].MinAvailable)
	}
	c := j.Spec.Tasks[0].Template.Spec.Containers[0]
	if c.Name != "train" || c.Image != "busybox" || !reflect.DeepEqual(c.Command, []string{"sleep", "1"}) || !reflect.DeepEqual(c.Args, []string{"-x"}) ||
		c.Resources.Limits != nil || !reflect.DeepEqual(c.Resources.Requests, req) || j.Spec.Tasks[0].Name != DefaultTaskName {
		t.Errorf("container %+v, task %q", c, j.Spec.Tasks[0].Name)
	}
	if j = buildJob("t", "ns", "i", nil, nil, 4, 2, "q", "s", nil, nil); j.Spec.MinAvailable != 2 || *j.Spec.Tasks[0].MinAvailable != 2 {
		t.Errorf("--min 2: %d", j.Spec.MinAvailable)
	}
	// 'create --dry-run=client -o yaml' shows no empty status.
	b, err := json.Marshal(j)
	if err != nil || strings.Contains(string(b), `"status"`) {
		t.Errorf("a new job marshals with a status (%v): %s", err, b)
	}
}

func TestMinAvailableAndTasks(t *testing.T) {
	j := &batchv1alpha1.Job{Spec: batchv1alpha1.JobSpec{Tasks: []batchv1alpha1.TaskSpec{{Name: "ps", Replicas: 1}, {Replicas: 3}}}}
	if got := minAvailable(j); got != 4 {
		t.Errorf("no minAvailable anywhere means every pod: %d", got)
	}
	j.Status.MinAvailable = 2
	if got := minAvailable(j); got != 2 {
		t.Errorf("status: %d", got)
	}
	j.Spec.MinAvailable = 3
	if got := minAvailable(j); got != 3 {
		t.Errorf("spec first: %d", got)
	}
	if got := tasksOf(j); got != "ps=1,default1=3" {
		t.Errorf("tasks: %q", got)
	}
	if queueOf(j) != "default" || phaseOf(j) != batchv1alpha1.JobPending {
		t.Errorf("defaults: queue %q phase %q", queueOf(j), phaseOf(j))
	}
}

func TestValidateJob(t *testing.T) {
	valid := func() *batchv1alpha1.Job {
		return buildJob("train", "ns", "busybox", nil, nil, 2, 0, "research", "volcano", nil, nil)
	}
	if err := validateJob(valid()); err != nil {
		t.Fatal(err)
	}
	for want, change := range map[string]func(*batchv1alpha1.Job){
		"has no tasks":                                        func(j *batchv1alpha1.Job) { j.Spec.Tasks = nil },
		`task "default0" is named twice`:                      func(j *batchv1alpha1.Job) { j.Spec.Tasks = append(j.Spec.Tasks, j.Spec.Tasks[0]) },
		`invalid task name "Web"`:                             func(j *batchv1alpha1.Job) { j.Spec.Tasks[0].Name = "Web" },
		"has no containers":                                   func(j *batchv1alpha1.Job) { j.Spec.Tasks[0].Template.Spec.Containers = nil },
		"minAvailable 3 must be between 0 and its replicas 2": func(j *batchv1alpha1.Job) { j.Spec.Tasks[0].MinAvailable = ptr.To(int32(3)) },
		"minAvailable 5 must be between 0 and its 2 pods":     func(j *batchv1alpha1.Job) { j.Spec.MinAvailable = 5 },
		"root queue":                                          func(j *batchv1alpha1.Job) { j.Spec.Queue = "root" },
		`invalid --queue "A_B"`:                               func(j *batchv1alpha1.Job) { j.Spec.Queue = "A_B" },
		"replicas -1 must not be":                             func(j *batchv1alpha1.Job) { j.Spec.Tasks[0].Replicas = -1 },
	} {
		j := valid()
		change(j)
		if err := validateJob(j); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}

func TestPodGroupOfAndOwnership(t *testing.T) {
	j := jobIn(batchv1alpha1.JobRunning, 0)
	ctrl := metav1.OwnerReference{APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: "train", UID: "u-1", Controller: ptr.To(true)}
	old := ctrl
	old.UID = "u-0"
	pgs := []schedulingv1beta1.PodGroup{
		{ObjectMeta: metav1.ObjectMeta{Name: "train"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other", OwnerReferences: []metav1.OwnerReference{ctrl}}},
	}
	if pg := podGroupOf(j, pgs); pg == nil || pg.Name != "other" {
		t.Errorf("the controlled podgroup comes first: %v", pg)
	}
	if pg := podGroupOf(j, pgs[:1]); pg == nil || pg.Name != "train" {
		t.Errorf("by name: %v", pg)
	}
	if pg := podGroupOf(j, nil); pg != nil {
		t.Errorf("none: %v", pg)
	}
	mine := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1alpha1.JobNameLabel: "train"}, OwnerReferences: []metav1.OwnerReference{ctrl}}}
	stale := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1alpha1.JobNameLabel: "train"}, OwnerReferences: []metav1.OwnerReference{old}}}
	if !ownedBy(mine, j) || ownedBy(stale, j) {
		t.Errorf("ownedBy: mine %v, stale %v", ownedBy(mine, j), ownedBy(stale, j))
	}
	cm := &busv1alpha1.Command{TargetObject: &ctrl}
	other := &busv1alpha1.Command{TargetObject: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: "train"}}
	if !targetsJob(cm, j) || targetsJob(other, j) || targetsJob(&busv1alpha1.Command{}, j) {
		t.Errorf("targetsJob")
	}
}
