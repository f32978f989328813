package job

import (
	"context"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func fakeJob(name string, phase batchv1alpha1.JobPhase, queue string) *batchv1alpha1.Job {
	return &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       batchv1alpha1.JobSpec{Queue: queue, Tasks: []batchv1alpha1.TaskSpec{{Name: "w", Replicas: 2}}},
		Status:     batchv1alpha1.JobStatus{State: batchv1alpha1.JobState{Phase: phase}},
	}
}

// runOptions runs Complete, Validate and Run as the command does.
func runOptions(o interface {
	Complete([]string) error
	Validate() error
	Run(context.Context) error
}, args ...string) error {
	if err := o.Complete(args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(context.Background())
}

// TestListOptions: Complete takes the namespace and client from the
// factory; Validate refuses what cannot work before any request; Run
// keeps the jobs that pass the filters.
func TestListOptions(t *testing.T) {
	vc := vcfake.NewSimpleClientset(fakeJob("train", batchv1alpha1.JobRunning, "research"), fakeJob("eval", batchv1alpha1.JobAborted, ""))
	for _, tc := range []struct {
		name          string
		args          []string
		all           bool
		queue, phase  string
		wantOut, want string
		wantErr       string
	}{
		{name: "names only", args: []string{"train"}, wantOut: "train\n"},
		{name: "phase filter", phase: "Aborted", wantOut: "eval\n"},
		{name: "default queue", queue: "default", wantOut: "eval\n"},
		{name: "nothing kept", queue: "nope", want: "No jobs found in ns namespace.\n"},
		{name: "missing", args: []string{"gone"}, wantErr: `job "gone" not found in namespace "ns"`},
		{name: "names with -A", args: []string{"train"}, all: true, wantErr: "names cannot be combined with --all-namespaces: job names are per namespace"},
		{name: "unknown phase", phase: "Sleeping", wantErr: `unknown --phase "Sleeping"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := &ListOptions{List: list.NewOptions(clitesting.Factory{NS: "ns", Volcano: vc}, streams).Named("job", ValidateName), QueuePhase: list.QueuePhase{Queue: tc.queue, Phase: tc.phase}}
			o.List.AllNamespaces = tc.all
			if tc.wantOut != "" {
				name := "name"
				o.List.PrintFlags.OutputFormat = &name
			}
			err := runOptions(o, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(util.Message(err), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(out.String(), "job.batch.volcano.sh/", "")
			if got != tc.wantOut || errOut.String() != tc.want {
				t.Errorf("stdout %q stderr %q, want %q and %q", got, errOut.String(), tc.wantOut, tc.want)
			}
		})
	}
}

func newOperateOptions(f util.Factory, streams genericiooptions.IOStreams, op operation) *OperateOptions {
	return &OperateOptions{IOStreams: streams, Factory: f, PrintFlags: write.NewPrintFlags("created"), op: op}
}

// TestOperateOptions: one Command per job, built as vcctl builds it, or
// none with --dry-run=client; a job in the wrong phase fails the command
// before anything is written.
func TestOperateOptions(t *testing.T) {
	for _, tc := range []struct {
		name, dryRun string
		job          *batchv1alpha1.Job
		wait         bool
		wantOut      string
		wantErr      string
		commands     int
	}{
		{name: "suspend", dryRun: "none", job: fakeJob("train", batchv1alpha1.JobRunning, ""), commands: 1},
		{name: "client dry run", dryRun: "client", job: fakeJob("train", batchv1alpha1.JobRunning, ""),
			wantOut: "command.bus.volcano.sh/train-abortjob- created (dry run)\n"},
		{name: "completed job", dryRun: "none", job: fakeJob("train", batchv1alpha1.JobCompleted, ""), wantErr: `cannot suspend job "train": it is Completed`},
		{name: "wait and dry run", dryRun: "server", wait: true, job: fakeJob("train", batchv1alpha1.JobRunning, ""), wantErr: "--wait cannot be combined with --dry-run"},
		{name: "bad dry run", dryRun: "maybe", job: fakeJob("train", batchv1alpha1.JobRunning, ""), wantErr: `invalid --dry-run "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vc := vcfake.NewSimpleClientset(tc.job)
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := newOperateOptions(clitesting.Factory{NS: "ns", Volcano: vc}, streams, suspendOp)
			o.DryRun, o.Wait = tc.dryRun, tc.wait
			err := runOptions(o, "train")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(util.Message(err), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantOut != "" && out.String() != tc.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), tc.wantOut)
			}
			cms, _ := vc.BusV1alpha1().Commands("ns").List(context.Background(), metav1.ListOptions{})
			if len(cms.Items) != tc.commands {
				t.Fatalf("%d Commands, want %d", len(cms.Items), tc.commands)
			}
			if tc.commands > 0 {
				cm := cms.Items[0]
				if cm.Action != string(busv1alpha1.AbortJobAction) || cm.TargetObject == nil || cm.TargetObject.UID != "uid-train" || cm.TargetObject.Kind != "Job" {
					t.Errorf("Command %+v", cm)
				}
			}
		})
	}
}

// TestDeleteOptions: every job is looked up first; --wait returns once
// the jobs are gone (at once here: the fake deletes at once).
func TestDeleteOptions(t *testing.T) {
	vc := vcfake.NewSimpleClientset(fakeJob("train", batchv1alpha1.JobRunning, ""), fakeJob("eval", batchv1alpha1.JobRunning, ""))
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &DeleteOptions{write.NewDeleteOptions(clitesting.Factory{NS: "ns", Volcano: vc}, streams)}
	if err := runOptions(o, "train", "gone"); err == nil || util.Message(err) != `job "gone" not found in namespace "ns"` {
		t.Fatalf("error %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("deleted something: %q", out.String())
	}
	if err := runOptions(o, "train", "eval"); err != nil {
		t.Fatal(err)
	}
	if want := "job.batch.volcano.sh/train deleted\njob.batch.volcano.sh/eval deleted\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	jobs, _ := vc.BatchV1alpha1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	if len(jobs.Items) != 0 {
		t.Errorf("%d jobs left", len(jobs.Items))
	}
}

// TestDescribeOptions: the header every describe writes, then the job's
// own sections; what cannot be found is <none>.
func TestDescribeOptions(t *testing.T) {
	j := fakeJob("train", batchv1alpha1.JobRunning, "research")
	j.Labels = map[string]string{"team": "nlp"}
	f := clitesting.Factory{NS: "ns", Volcano: vcfake.NewSimpleClientset(j), Kube: kubefake.NewSimpleClientset()}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := describe.NewOptions(Kind, f, streams)
	if err := runOptions(o, "train"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Name: train\n", "Namespace: ns\n", "Labels: team=nlp\n", "Annotations: <none>\n",
		"Spec:\n Queue: research\n", " Tasks:\n Name Replicas", "Status:\n Phase: Running\n",
		"PodGroup: <none>\n", "Pods: <none>\n", "Pending Commands: <none>\n", "Events: <none>\n",
	} {
		// Columns are aligned by a tabwriter: compare with one space.
		if !strings.Contains(spaces.ReplaceAllString(out.String(), " "), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if err := runOptions(describe.NewOptions(Kind, f, streams), "gone"); err == nil || util.Message(err) != `job "gone" not found in namespace "ns"` {
		t.Errorf("error %v", err)
	}
}

var spaces = regexp.MustCompile(` +`)
