package jobflow

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
)

// flow makes a JobFlow "f" of steps "name" or "name<-a,b" (depends on a, b).
func flow(steps ...string) *flowv1alpha1.JobFlow {
	jf := &flowv1alpha1.JobFlow{ObjectMeta: metav1.ObjectMeta{Name: "f", Namespace: "ns"}}
	for _, s := range steps {
		name, deps, _ := strings.Cut(s, "<-")
		f := flowv1alpha1.Flow{Name: name}
		if deps != "" {
			f.DependsOn = &flowv1alpha1.DependsOn{Targets: strings.Split(deps, ",")}
		}
		jf.Spec.Flows = append(jf.Spec.Flows, f)
	}
	return jf
}

func TestDraw(t *testing.T) {
	const (
		completed = batchv1alpha1.JobCompleted
		running   = batchv1alpha1.JobRunning
		failed    = batchv1alpha1.JobFailed
	)
	for _, tc := range []struct {
		name      string
		flow      *flowv1alpha1.JobFlow
		jobs      map[string]batchv1alpha1.JobPhase
		templates map[string]bool
		want      []string
	}{{
		name: "chain, first running",
		flow: flow("a", "b<-a", "c<-b"),
		jobs: map[string]batchv1alpha1.JobPhase{"f-a": running},
		want: []string{
			"a\tRunning\tf-a Running",
			"└─ b\tWaiting\twaits for a (Running)",
			"   └─ c\tWaiting\twaits for b (no job yet)",
		},
	}, {
		name: "diamond, listed out of order: drawn under its first deepest dependency",
		flow: flow("join<-left,right,root", "right<-root", "left<-root", "root"),
		jobs: map[string]batchv1alpha1.JobPhase{"f-root": completed, "f-left": completed, "f-right": running},
		want: []string{
			"root\tDone\tf-root Completed",
			"├─ right\tRunning\tf-right Running",
			"└─ left\tDone\tf-left Completed",
			"   └─ join (also after right, root)\tWaiting\twaits for right (Running)",
		},
	}, {
		name: "a job not yet written by the job controller is Pending",
		flow: flow("a"),
		jobs: map[string]batchv1alpha1.JobPhase{"f-a": ""},
		want: []string{"a\tRunning\tf-a Pending"},
	}, {
		name:      "dependencies done but the template is missing",
		flow:      flow("a", "b<-a"),
		jobs:      map[string]batchv1alpha1.JobPhase{"f-a": completed},
		templates: map[string]bool{"a": true},
		want: []string{
			"a\tDone\tf-a Completed",
			`└─ b	Waiting	JobTemplate "b" not found: the jobflow controller cannot make its job`,
		},
	}, {
		name: "no controller: nothing made",
		flow: flow("a", "b<-a"),
		want: []string{
			"a\tWaiting\tnothing to wait for: waiting for Volcano's jobflow controller to make its job",
			"└─ b\tWaiting\twaits for a (no job yet)",
		},
	}, {
		name: "failed step, two roots",
		flow: flow("x", "y", "z<-x,y"),
		jobs: map[string]batchv1alpha1.JobPhase{"f-x": failed, "f-y": completed},
		want: []string{
			"x\tFailed\tf-x Failed",
			"└─ z (also after y)\tWaiting\twaits for x (Failed)",
			"y\tDone\tf-y Completed",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Draw(Steps(Input{Flow: tc.flow, Jobs: tc.jobs, Templates: tc.templates}))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestCount(t *testing.T) {
	steps := Steps(Input{Flow: flow("a", "b<-a", "c<-a", "d<-b"), Jobs: map[string]batchv1alpha1.JobPhase{
		"f-a": batchv1alpha1.JobCompleted, "f-b": batchv1alpha1.JobRunning, "f-c": batchv1alpha1.JobTerminated}})
	if got, want := Count(steps), (Counts{Steps: 4, Done: 1, Running: 1, Failed: 1, Waiting: 1}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		flow *flowv1alpha1.JobFlow
		want string
	}{
		{flow("a", "b<-a"), ""},
		{flow(), "has no steps"},
		{flow("a", "a"), `step "a" is named twice`},
		{flow("a<-a"), `step "a" depends on itself`},
		{flow("a<-zz"), `step "a" depends on "zz", which is not a step of the flow`},
		{flow("a<-c", "b<-a", "c<-b"), "in a cycle: a -> c -> b -> a"},
		{flow("Bad_Name"), `invalid step name "Bad_Name"`},
	} {
		err := Check(tc.flow)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: got %v, want %q", tc.flow.Spec.Flows, err, tc.want)
		}
	}
}
