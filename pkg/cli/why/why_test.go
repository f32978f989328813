package why

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func options(f clitesting.Factory) (*Options, *bytes.Buffer) {
	out := &bytes.Buffer{}
	o := &Options{IOStreams: genericiooptions.IOStreams{Out: out, ErrOut: &bytes.Buffer{}}, Factory: f,
		SchedulerNames: []string{"volcano"}, ControllersNamespace: "volcano-system", ChunkSize: 500}
	return o, out
}

func TestOptionsBadInput(t *testing.T) {
	f := clitesting.Factory{NS: "ns", Volcano: vcfake.NewSimpleClientset(), Kube: kubefake.NewSimpleClientset()}
	for _, c := range []struct {
		args   []string
		mutate func(*Options)
		want   string
	}{
		{nil, nil, "name what to explain"},
		{[]string{"deploy", "x"}, nil, `unknown kind "deploy"`},
		{[]string{"queue"}, nil, "name the queue to explain"},
		{[]string{"pg", "Not_Valid"}, nil, `invalid podgroup name "Not_Valid"`},
		{[]string{"pg", "x"}, func(o *Options) { o.Output = "table" }, `unknown output format "table"`},
		{[]string{"pg", "x"}, func(o *Options) { o.SchedulerNames = nil }, "--scheduler-name must name"},
		{[]string{"pg", "x"}, func(o *Options) { o.ChunkSize = -1 }, "--chunk-size"},
	} {
		o, _ := options(f)
		if c.mutate != nil {
			c.mutate(o)
		}
		err := o.Complete(c.args)
		if err == nil {
			err = o.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

// Run on fake clients: a podgroup in a Closed queue is blocked (error
// after the report), and the JSON report says why.
func TestOptionsRun(t *testing.T) {
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Status: schedulingv1beta1.QueueStatus{State: schedulingv1beta1.QueueStateClosed}}
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "ns"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "q"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: map[string]string{keys.KubeGroupName: "pg"}},
		Spec: corev1.PodSpec{SchedulerName: "volcano"}}
	f := clitesting.Factory{NS: "ns", Volcano: vcfake.NewSimpleClientset(q, pg), Kube: kubefake.NewSimpleClientset(pod)}
	o, out := options(f)
	o.Output = "json"
	o.now = func() time.Time { return time.Now() }
	if err := o.Complete([]string{"podgroup", "pg"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "podgroup ns/pg is blocked: ") || !strings.Contains(err.Error(), "QueueClosed") {
		t.Fatalf("error %v", err)
	}
	var rep analysis.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Blocked || rep.Kind != PodGroup || rep.Namespace != "ns" {
		t.Errorf("%+v", rep)
	}
}
