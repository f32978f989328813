package queue

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

// fakeFactory hands out a fake Volcano clientset; the other methods are
// not called by 'queue tree'.
type fakeFactory struct {
	util.Factory
	vc versioned.Interface
}

func (f fakeFactory) VolcanoClient() (versioned.Interface, error) { return f.vc, nil }

func runTree(t *testing.T, objs ...runtime.Object) (stdout, stderr string) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &TreeOptions{IOStreams: streams, Factory: fakeFactory{vc: fake.NewSimpleClientset(objs...)}}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

func treeQueue(name, parent string, weight int32, state schedulingv1beta1.QueueState, running int32) *schedulingv1beta1.Queue {
	return &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       schedulingv1beta1.QueueSpec{Parent: parent, Weight: weight},
		Status:     schedulingv1beta1.QueueStatus{State: state, Running: running},
	}
}

func TestTreeOutput(t *testing.T) {
	open, closed := schedulingv1beta1.QueueStateOpen, schedulingv1beta1.QueueStateClosed
	stdout, stderr := runTree(t,
		treeQueue("root", "", 1, open, 0),
		treeQueue("default", "", 1, open, 0),
		treeQueue("team-a", "root", 2, open, 3),
		treeQueue("team-a-batch", "team-a", 1, closed, 0),
		treeQueue("team-a-batch-nightly", "team-a-batch", 1, open, 12),
		treeQueue("team-a-dev", "team-a", 1, open, 0),
		treeQueue("lost", "gone", 1, open, 0),
		treeQueue("lost-child", "lost", 1, open, 2),
		treeQueue("loop-a", "loop-b", 1, open, 0),
		treeQueue("loop-b", "loop-c", 1, closed, 0),
		treeQueue("loop-c", "loop-a", 1, open, 0),
		treeQueue("below-loop", "loop-b", 1, open, 1),
	)
	// Columns as wide as their widest cell plus two spaces, as kubectl
	// prints them; no trailing blanks. Queues that cannot hang under root
	// follow, each with what is wrong and its subtree.
	want := `QUEUE                                                       STATE   WEIGHT  INQUEUE  PENDING  RUNNING  UNKNOWN  COMPLETED
root                                                        Open    1       0        0        0        0        0
├── default                                                 Open    1       0        0        0        0        0
└── team-a                                                  Open    2       0        0        3        0        0
    ├── team-a-batch                                        Closed  1       0        0        0        0        0
    │   └── team-a-batch-nightly                            Open    1       0        0        12       0        0
    └── team-a-dev                                          Open    1       0        0        0        0        0
lost (parent "gone" missing)                                Open    1       0        0        0        0        0
└── lost-child                                              Open    1       0        0        2        0        0
loop-a (parent cycle loop-a -> loop-b -> loop-c -> loop-a)  Open    1       0        0        0        0        0
loop-b (parent cycle loop-b -> loop-c -> loop-a -> loop-b)  Closed  1       0        0        0        0        0
└── below-loop                                              Open    1       0        0        1        0        0
loop-c (parent cycle loop-c -> loop-a -> loop-b -> loop-c)  Open    1       0        0        0        0        0
`
	if stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}
}

// With no queues, the header still goes to stdout and the notice to stderr.
func TestTreeEmpty(t *testing.T) {
	stdout, stderr := runTree(t)
	if want := "QUEUE  STATE  WEIGHT  INQUEUE  PENDING  RUNNING  UNKNOWN  COMPLETED\n"; stdout != want {
		t.Errorf("stdout: %q, want %q", stdout, want)
	}
	if stderr != "No queues found.\n" {
		t.Errorf("stderr: %q", stderr)
	}
}
