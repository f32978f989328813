package jobflow

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
)

// contains fails the test unless out holds every line of want.
func contains(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: missing %q in:\n%s", what, w, out)
		}
	}
}

// TestFlowLifecycle: templates and a flow created from files, the
// jobflow controller played step by step, and what list, describe,
// jobtemplate list and job list --flow show of it; then delete --wait.
func TestFlowLifecycle(t *testing.T) {
	flowCRDs(t)
	ns := namespace(t, "flow-life")
	ctx := context.Background()

	r := mustVC(t, "jobtemplate", "create", "-n", ns, "-f", writeFile(t, "t.yaml",
		templateYAML("prep")+"---\n"+templateYAML("train")+"---\n"+templateYAML("eval")+"---\n"+templateYAML("report")))
	if want := "jobtemplate.flow.volcano.sh/prep created\njobtemplate.flow.volcano.sh/train created\njobtemplate.flow.volcano.sh/eval created\njobtemplate.flow.volcano.sh/report created\n"; r.Stdout != want {
		t.Errorf("jobtemplate create:\n%s", r)
	}
	r = mustVC(t, "jobflow", "create", "-n", ns, "--file", writeFile(t, "f.yaml", flowYAML("pipe", "prep", "train<-prep", "eval<-train", "report<-train,prep")))
	if r.Stdout != "jobflow.flow.volcano.sh/pipe created\n" {
		t.Errorf("jobflow create:\n%s", r)
	}
	r = mustVC(t, "jobflow", "list", "-n", ns)
	contains(t, "list before any job", r.Stdout, "NAME", "PHASE", "STEPS", "WAITING", "pipe   Pending   4       0      0         0        4")

	jf, err := env.vc.FlowV1alpha1().JobFlows(ns).Get(ctx, "pipe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prep := playJob(t, jf, "prep", batchv1alpha1.JobCompleted)
	train := playJob(t, jf, "train", batchv1alpha1.JobRunning)
	playFlowStatus(t, ns, "pipe", flowv1alpha1.Running, prep, train)
	// A job of another flow, and one of no flow.
	other := &flowv1alpha1.JobFlow{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}, Spec: flowv1alpha1.JobFlowSpec{Flows: []flowv1alpha1.Flow{{Name: "prep"}}}}
	if other, err = env.vc.FlowV1alpha1().JobFlows(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	playJob(t, other, "prep", batchv1alpha1.JobPending)

	r = mustVC(t, "jobflow", "get", "-N", "pipe", "-n", ns)
	contains(t, "get -N", r.Stdout, "pipe   Running   4       1      1         0        2")
	r = mustVC(t, "jobflow", "describe", "pipe", "-n", ns)
	contains(t, "describe", r.Stdout,
		"Phase:",
		"Steps:              4: 1 done, 1 running, 0 failed, 2 waiting",
		"prep ", "Done", "pipe-prep Completed",
		"└─ train", "pipe-train Running",
		"├─ eval", "waits for train (Running)",
		"└─ report (also after prep)",
		"Status:", "pipe-prep", "pipe-train")
	r = mustVC(t, "jobtemplate", "list", "-n", ns)
	contains(t, "jobtemplate list", r.Stdout, "JOBS", "prep ", "pipe-prep,other-prep", "main=1")
	r = mustVC(t, "jobtemplate", "describe", "prep", "-n", ns)
	contains(t, "jobtemplate describe", r.Stdout, "Tasks:", "Jobs:", "pipe-prep", "other-prep")
	r = mustVC(t, "job", "list", "-n", ns, "--flow", "pipe", "-o", "name")
	if r.Stdout != "job.batch.volcano.sh/pipe-prep\njob.batch.volcano.sh/pipe-train\n" {
		t.Errorf("job list --flow pipe:\n%s", r)
	}
	r = mustVC(t, "job", "list", "-A", "--flow", "other", "-o", "name")
	if r.Stdout != "job.batch.volcano.sh/other-prep\n" {
		t.Errorf("job list -A --flow other:\n%s", r)
	}

	r = mustVC(t, "jobflow", "delete", "pipe", "other", "-n", ns, "--wait")
	contains(t, "delete", r.Stdout, "jobflow.flow.volcano.sh/pipe deleted", "jobflow.flow.volcano.sh/other deleted")
	r = mustVC(t, "jobtemplate", "delete", "-N", "report", "-n", ns, "-o", "name")
	if r.Stdout != "jobtemplate.flow.volcano.sh/report\n" {
		t.Errorf("jobtemplate delete -o name:\n%s", r)
	}
	if _, err := env.vc.FlowV1alpha1().JobTemplates(ns).Get(ctx, "report", metav1.GetOptions{}); err == nil {
		t.Error("report still there")
	}
}

// TestCreateStopsAtFirstRefusal: objects of one file are created in
// order; the first the server refuses ends the command, saying which
// were created before it.
func TestCreateStopsAtFirstRefusal(t *testing.T) {
	flowCRDs(t)
	ns := namespace(t, "flow-partial")
	mustVC(t, "jobtemplate", "create", "-n", ns, "-f", writeFile(t, "b.yaml", templateYAML("b")))
	r := vc(t, "jobtemplate", "create", "-n", ns, "-f", writeFile(t, "abc.yaml", templateYAML("a")+"---\n"+templateYAML("b")+"---\n"+templateYAML("c")))
	if r.Code == 0 || r.Stdout != "jobtemplate.flow.volcano.sh/a created\n" ||
		r.Stderr != "error: jobtemplate \"b\" already exists in namespace \""+ns+"\"; created before it: jobtemplate.flow.volcano.sh/a\n" {
		t.Errorf("partial create:\n%s", r)
	}
	if _, err := env.vc.FlowV1alpha1().JobTemplates(ns).Get(context.Background(), "c", metav1.GetOptions{}); err == nil {
		t.Error("c was created after the refusal")
	}
	// Dry runs write nothing.
	r = mustVC(t, "jobflow", "create", "-n", ns, "-f", writeFile(t, "f.yaml", flowYAML("dry", "a", "b<-a")), "--dry-run=server", "-o", "name")
	if r.Stdout != "jobflow.flow.volcano.sh/dry\n" {
		t.Errorf("server dry run:\n%s", r)
	}
	r = mustVC(t, "jobflow", "create", "-n", ns, "-f", writeFile(t, "g.yaml", flowYAML("dry", "a")), "--dry-run=client", "-o", "yaml")
	contains(t, "client dry run", r.Stdout, "kind: JobFlow", "name: dry")
	if l, _ := env.vc.FlowV1alpha1().JobFlows(ns).List(context.Background(), metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("a dry run created %d flows", len(l.Items))
	}
}

// TestBadInput: refused before anything is written, one line each.
func TestBadInput(t *testing.T) {
	flowCRDs(t)
	ns := namespace(t, "flow-bad")
	admin := env.cli.Admin
	good := flowYAML("f", "a", "b<-a")
	badinput.Run(t, env.cli, env.vc, []badinput.Case{
		{"no file", admin, []string{"jobflow", "create", "-n", ns}, "give the file holding the jobflow(s)"},
		{"missing file", admin, []string{"jobflow", "create", "-n", ns, "-f", "/nonexistent.yaml"}, "cannot read -f /nonexistent.yaml"},
		{"template in a flow's create", admin, []string{"jobflow", "create", "-n", ns, "-f", writeFile(t, "t.yaml", good+"---\n"+templateYAML("a"))},
			`holds kind "JobTemplate" of apiVersion "flow.volcano.sh/v1alpha1", not a flow.volcano.sh/v1alpha1 JobFlow`},
		{"flow in a template's create", admin, []string{"jobtemplate", "create", "-n", ns, "-f", writeFile(t, "f.yaml", templateYAML("a")+"---\n"+good)},
			`holds kind "JobFlow" of apiVersion "flow.volcano.sh/v1alpha1", not a flow.volcano.sh/v1alpha1 JobTemplate`},
		{"unknown field", admin, []string{"jobflow", "create", "-n", ns, "-f", writeFile(t, "u.yaml", strings.Replace(good, "targets", "target", 1))}, `unknown field "spec.flows[1].dependsOn.target"`},
		{"cycle", admin, []string{"jobflow", "create", "-n", ns, "-f", writeFile(t, "c.yaml", flowYAML("c", "a<-b", "b<-a"))}, "in a cycle: a -> b -> a"},
		{"unknown target", admin, []string{"jobflow", "create", "-n", ns, "-f", writeFile(t, "x.yaml", flowYAML("x", "a<-nope"))}, `depends on "nope", which is not a step of the flow`},
		{"template without tasks", admin, []string{"jobtemplate", "create", "-n", ns, "-f", writeFile(t, "e.yaml", "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata:\n  name: e\nspec: {}\n")}, `jobtemplate "e" has no tasks`},
		{"same name twice", admin, []string{"jobtemplate", "create", "-n", ns, "-f", writeFile(t, "d.yaml", templateYAML("a")+"---\n"+templateYAML("a"))}, `jobtemplate "a" is in document 1`},
		{"other namespace", admin, []string{"jobflow", "create", "-n", ns, "-f", writeFile(t, "n.yaml", strings.Replace(good, "name: f\n", "name: f\n  namespace: elsewhere\n", 1))}, `is in namespace "elsewhere", not "` + ns + `" (-n)`},
		{"name and file", admin, []string{"jobflow", "create", "x", "-n", ns, "-f", writeFile(t, "g.yaml", good)}, "the file names the jobflow(s)"},
		{"describe missing", admin, []string{"jobflow", "describe", "nope", "-n", ns}, `jobflow "nope" not found in namespace "` + ns + `"`},
		{"describe two", admin, []string{"jobflow", "describe", "a", "-N", "b", "-n", ns}, "give one jobflow name, got 2"},
		{"delete missing", admin, []string{"jobtemplate", "delete", "nope", "-n", ns}, `jobtemplate "nope" not found in namespace "` + ns + `"`},
		{"delete nothing", admin, []string{"jobflow", "delete", "-n", ns}, "name the jobflow(s) to delete"},
		{"bad output", admin, []string{"jobflow", "list", "-n", ns, "-o", "xml"}, "xml"},
		{"bad --flow", admin, []string{"job", "list", "-n", ns, "--flow", "Bad_Flow"}, `invalid --flow "Bad_Flow"`},
		{"forbidden", env.cli.Alice, []string{"jobflow", "list", "-n", ns}, "forbidden"},
	})
}
