package job

import (
	"context"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
)

// TestCommandsAsVcctlWritesThem: each lifecycle verb writes one Command per
// job, field for field as vcctl's CreateJobCommand writes it: in the job's
// namespace, generateName <job>-<lower(action)>-, one controller owner
// reference to the Job and the same reference as target, the action, and
// nothing else.
func TestCommandsAsVcctlWritesThem(t *testing.T) {
	ns := namespace(t, "job-cmds")
	cases := []struct {
		verb, action string
		phase        batchv1alpha1.JobPhase
	}{
		{"suspend", "AbortJob", batchv1alpha1.JobRunning},
		{"resume", "ResumeJob", batchv1alpha1.JobAborted},
		{"restart", "RestartJob", batchv1alpha1.JobRunning},
		{"terminate", "TerminateJob", batchv1alpha1.JobPending},
	}
	for _, tc := range cases {
		t.Run(tc.verb, func(t *testing.T) {
			name := "cmd-" + tc.verb
			j := makeJob(t, ns, name, "research", 2, tc.phase)
			r := mustVC(t, "job", tc.verb, name, "-n", ns)
			cmds := commandsOf(t, ns, name)
			if len(cmds) != 1 {
				t.Fatalf("want one Command, got %d", len(cmds))
			}
			cm := cmds[0]
			if got := strings.TrimSpace(r.Stdout); got != "command.bus.volcano.sh/"+cm.Name+" created" {
				t.Errorf("stdout %q, want the Command's name", got)
			}
			prefix := name + "-" + strings.ToLower(tc.action) + "-"
			if cm.GenerateName != prefix || !strings.HasPrefix(cm.Name, prefix) || len(cm.Name) != len(prefix)+5 {
				t.Errorf("name %q generateName %q, want generated from %q", cm.Name, cm.GenerateName, prefix)
			}
			want := expectedRef(j)
			if cm.Namespace != ns {
				t.Errorf("namespace %q, want the job's %q", cm.Namespace, ns)
			}
			if !reflect.DeepEqual(cm.OwnerReferences, []metav1.OwnerReference{want}) {
				t.Errorf("ownerReferences %+v, want %+v", cm.OwnerReferences, want)
			}
			if cm.TargetObject == nil || !reflect.DeepEqual(*cm.TargetObject, want) {
				t.Errorf("target %+v, want %+v", cm.TargetObject, want)
			}
			if cm.Action != tc.action || cm.Reason != "" || cm.Message != "" || len(cm.Labels) != 0 || len(cm.Annotations) != 0 {
				t.Errorf("action %q reason %q message %q labels %v annotations %v: want action %s only",
					cm.Action, cm.Reason, cm.Message, cm.Labels, cm.Annotations, tc.action)
			}
		})
	}
	if busv1alpha1.AbortJobAction != "AbortJob" || busv1alpha1.ResumeJobAction != "ResumeJob" ||
		busv1alpha1.RestartJobAction != "RestartJob" || busv1alpha1.TerminateJobAction != "TerminateJob" {
		t.Errorf("the action constants are not Volcano's")
	}
}

// TestSeveralJobsOneCommandEach: 'job suspend a b' writes one Command per
// job; -o yaml prints them.
func TestSeveralJobsOneCommandEach(t *testing.T) {
	ns := namespace(t, "job-several")
	makeJob(t, ns, "a", "research", 1, batchv1alpha1.JobRunning)
	makeJob(t, ns, "b", "research", 1, batchv1alpha1.JobPending)
	r := mustVC(t, "job", "suspend", "a", "b", "-n", ns, "-o", "yaml")
	for _, n := range []string{"a", "b"} {
		if got := len(commandsOf(t, ns, n)); got != 1 {
			t.Errorf("job %s: %d Commands, want 1", n, got)
		}
	}
	docs := strings.Split(r.Stdout, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("-o yaml: want two documents, got:\n%s", r.Stdout)
	}
	var cm busv1alpha1.Command
	if err := yaml.Unmarshal([]byte(docs[0]), &cm); err != nil || cm.Kind != "Command" || cm.Action != "AbortJob" || cm.TargetObject.Name != "a" {
		t.Errorf("-o yaml printed %+v (%v)", cm, err)
	}
}

// TestOperateDryRun: --dry-run=client sends nothing, --dry-run=server is
// checked by the server and persists nothing.
func TestOperateDryRun(t *testing.T) {
	ns := namespace(t, "job-dry")
	makeJob(t, ns, "dry", "research", 1, batchv1alpha1.JobRunning)
	r := mustVC(t, "job", "terminate", "dry", "-n", ns, "--dry-run=client")
	if got := strings.TrimSpace(r.Stdout); got != "command.bus.volcano.sh/dry-terminatejob- created (dry run)" {
		t.Errorf("client dry run: %q", got)
	}
	r = mustVC(t, "job", "terminate", "dry", "-n", ns, "--dry-run=server")
	if !strings.HasPrefix(r.Stdout, "command.bus.volcano.sh/dry-terminatejob-") || !strings.Contains(r.Stdout, "(server dry run)") {
		t.Errorf("server dry run: %q", r.Stdout)
	}
	r = mustVC(t, "job", "terminate", "dry", "-n", ns, "--dry-run=client", "-o", "yaml")
	if !strings.Contains(r.Stdout, "generateName: dry-terminatejob-") || !strings.Contains(r.Stdout, "action: TerminateJob") {
		t.Errorf("client dry run -o yaml:\n%s", r.Stdout)
	}
	if n := len(commandsOf(t, ns, "dry")); n != 0 {
		t.Errorf("a dry run wrote %d Commands", n)
	}
}

// TestOperateBadInput: a missing job, a job in a phase the controller
// would not act on, a bad name, bad flags: one line on stderr, exit 1, no
// Command written, not even for the jobs named before the bad one.
func TestOperateBadInput(t *testing.T) {
	ns := namespace(t, "job-bad")
	makeJob(t, ns, "running", "research", 1, batchv1alpha1.JobRunning)
	makeJob(t, ns, "aborted", "research", 1, batchv1alpha1.JobAborted)
	makeJob(t, ns, "done", "research", 1, batchv1alpha1.JobCompleted)
	makeJob(t, ns, "restarting", "research", 1, batchv1alpha1.JobRestarting)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing job", []string{"job", "suspend", "running", "nope", "-n", ns}, `job "nope" not found in namespace "` + ns + `"`},
		{"missing namespace", []string{"job", "suspend", "running", "-n", "no-such-ns"}, `job "running" not found in namespace "no-such-ns"`},
		{"resume a running job", []string{"job", "resume", "running", "-n", ns}, `cannot resume job "running": it is Running: only a suspended (Aborting or Aborted) job can be resumed`},
		{"suspend twice", []string{"job", "suspend", "running", "aborted", "-n", ns}, `cannot suspend job "aborted": it is Aborted: it is already suspended`},
		{"suspend a finished job", []string{"job", "suspend", "done", "-n", ns}, `cannot suspend job "done": it is Completed`},
		{"terminate a suspended job", []string{"job", "terminate", "aborted", "-n", ns}, "delete it"},
		{"restart a suspended job", []string{"job", "restart", "aborted", "-n", ns}, "resume it instead"},
		{"restart while restarting", []string{"job", "restart", "restarting", "-n", ns}, "already restarting"},
		{"suspend while restarting", []string{"job", "suspend", "restarting", "-n", ns}, "retry once it is Pending"},
		{"bad name", []string{"job", "suspend", "Bad_Name", "-n", ns}, `invalid job name "Bad_Name"`},
		{"named twice", []string{"job", "restart", "running", "running", "-n", ns}, `job "running" is named twice`},
		{"no name", []string{"job", "terminate", "-n", ns}, "name the job(s) to terminate"},
		{"wait and dry run", []string{"job", "suspend", "running", "-n", ns, "--wait", "--dry-run=server"}, "--wait cannot be combined with --dry-run"},
		{"negative timeout", []string{"job", "suspend", "running", "-n", ns, "--timeout=-1s"}, "invalid --timeout -1s"},
		{"bad dry run", []string{"job", "suspend", "running", "-n", ns, "--dry-run=maybe"}, `invalid --dry-run "maybe"`},
		{"bad output", []string{"job", "suspend", "running", "-n", ns, "-o", "table"}, `unknown output format "table"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustFail(t, tc.want, tc.args...)
		})
	}
	list, err := env.vc.BusV1alpha1().Commands(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("bad input wrote %d Commands", len(list.Items))
	}
}

// TestOperateForbidden: a user without RBAC rights gets one line saying so.
func TestOperateForbidden(t *testing.T) {
	ns := namespace(t, "job-forbidden")
	makeJob(t, ns, "j", "research", 1, batchv1alpha1.JobRunning)
	r := run(t, command(env.alice, "job", "suspend", "j", "-n", ns))
	if r.Code == 0 || !strings.HasPrefix(r.Stderr, "error: forbidden: ") || strings.Count(r.Stderr, "\n") != 1 {
		t.Errorf("as alice:\n%s", r)
	}
	if n := len(commandsOf(t, ns, "j")); n != 0 {
		t.Errorf("%d Commands written", n)
	}
}
