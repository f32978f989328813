package podgroup

import (
	"context"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func fakePodGroup(name, queue string, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "batch"},
		Spec:       schedulingv1beta1.PodGroupSpec{Queue: queue, MinMember: 2},
		Status:     schedulingv1beta1.PodGroupStatus{Phase: phase},
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

// TestListOptions: the namespace and client come from the factory;
// Validate refuses what cannot work before any request; Run keeps the
// podgroups that pass the filters.
func TestListOptions(t *testing.T) {
	vc := vcfake.NewSimpleClientset(fakePodGroup("a", "team-a", schedulingv1beta1.PodGroupRunning), fakePodGroup("b", "team-b", schedulingv1beta1.PodGroupPending))
	for _, tc := range []struct {
		name         string
		args         []string
		all          bool
		queue, phase string
		selector     string
		wantOut      string
		wantErrOut   string
		wantErr      string
	}{
		{name: "names", args: []string{"b"}, wantOut: "b\n"},
		{name: "queue filter", queue: "team-a", wantOut: "a\n"},
		{name: "phase filter", phase: "Pending", wantOut: "b\n"},
		{name: "nothing kept", phase: "Completed", wantErrOut: "No podgroups found in batch namespace.\n"},
		{name: "missing", args: []string{"gone"}, wantErr: `podgroup "gone" not found in namespace "batch"`},
		{name: "names with -A", args: []string{"a"}, all: true, wantErr: "names cannot be combined with --all-namespaces"},
		{name: "names and selector", args: []string{"a"}, selector: "x=y", wantErr: "give podgroup names or --selector, not both"},
		{name: "bad selector", selector: "a b", wantErr: `invalid --selector "a b"`},
		{name: "unknown phase", phase: "Done", wantErr: `unknown --phase "Done"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := &ListOptions{List: list.NewOptions(clitesting.Factory{NS: "batch", Volcano: vc}, streams).Named("podgroup", validateName), QueuePhase: list.QueuePhase{Queue: tc.queue, Phase: tc.phase}}
			o.List.AllNamespaces, o.List.Selector = tc.all, tc.selector
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
			got := strings.ReplaceAll(out.String(), "podgroup.scheduling.volcano.sh/", "")
			if got != tc.wantOut || errOut.String() != tc.wantErrOut {
				t.Errorf("stdout %q stderr %q, want %q and %q", got, errOut.String(), tc.wantOut, tc.wantErrOut)
			}
		})
	}
}

var spaces = regexp.MustCompile(` +`)

// TestDescribeOptions: the shared header, the podgroup's spec and status,
// its member pods (by the group-name annotation) and events.
func TestDescribeOptions(t *testing.T) {
	pg := fakePodGroup("a", "team-a", schedulingv1beta1.PodGroupRunning)
	pg.Status.Conditions = []schedulingv1beta1.PodGroupCondition{{Type: schedulingv1beta1.PodGroupScheduled, Status: corev1.ConditionTrue, Reason: "tasks", Message: "all scheduled"}}
	member := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a-0", Namespace: "batch", Annotations: map[string]string{keys.KubeGroupName: "a"}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "batch"}}
	f := clitesting.Factory{NS: "batch", Volcano: vcfake.NewSimpleClientset(pg), Kube: kubefake.NewSimpleClientset(member, other)}
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	if err := runOptions(describe.NewOptions(Kind, f, streams), "a"); err != nil {
		t.Fatal(err)
	}
	got := spaces.ReplaceAllString(out.String(), " ")
	for _, want := range []string{
		"Name: a\nNamespace: batch\nLabels: <none>\nAnnotations: <none>\n",
		"Spec:\n Queue: team-a\n Min Member: 2\n",
		"Status:\n Phase: Running\n",
		" Conditions:\n Type Status Reason Message\n Scheduled True tasks all scheduled\n",
		"Pods:\n Name Phase Node\n a-0 Running node-1\n",
		"Events: <none>\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(got, " x ") {
		t.Errorf("a pod of another group is listed:\n%s", out.String())
	}
	err := runOptions(describe.NewOptions(Kind, f, streams), "Not_A_Name")
	if err == nil || !strings.Contains(util.Message(err), `invalid podgroup name "Not_A_Name"`) {
		t.Errorf("error %v", err)
	}
}
