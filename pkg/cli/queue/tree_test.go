package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

func runTree(t *testing.T, objs ...runtime.Object) (stdout, stderr string) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &TreeOptions{IOStreams: streams, Factory: clitesting.Factory{Volcano: fake.NewSimpleClientset(objs...)}}
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

func runTreeOutput(t *testing.T, output string, objs ...runtime.Object) string {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := &TreeOptions{IOStreams: streams, Factory: clitesting.Factory{Volcano: fake.NewSimpleClientset(objs...)}, Output: output}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func withResources(q *schedulingv1beta1.Queue, deserved, capability, allocated string) *schedulingv1beta1.Queue {
	parse := func(s string) corev1.ResourceList {
		if s == "" {
			return nil
		}
		l := corev1.ResourceList{}
		for _, kv := range strings.Split(s, ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		return l
	}
	q.Spec.Deserved, q.Spec.Capability, q.Status.Allocated = parse(deserved), parse(capability), parse(allocated)
	return q
}

func TestTreeWide(t *testing.T) {
	open := schedulingv1beta1.QueueStateOpen
	got := runTreeOutput(t, "wide",
		treeQueue("root", "", 1, open, 0),
		withResources(treeQueue("team-a", "", 2, open, 1), "cpu=16", "cpu=20,memory=64Gi", "cpu=12,memory=40Gi"),
		withResources(treeQueue("team-a-dev", "team-a", 1, open, 0), "cpu=4", "", ""),
	)
	want := `QUEUE             STATE  WEIGHT  INQUEUE  PENDING  RUNNING  UNKNOWN  COMPLETED  DESERVED  CAPABILITY          ALLOCATED
root              Open   1       0        0        0        0        0          <none>    <none>              <none>
└── team-a        Open   2       0        0        1        0        0          cpu=16    cpu=20,memory=64Gi  cpu=12,memory=40Gi
    └── team-a-dev  Open   1       0        0        0        0        0          cpu=4     <none>              <none>
`
	// Compare fields, not padding: the widths are printTable's, tested above.
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	if len(gl) != len(wl) {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	for i := range wl {
		if strings.Join(strings.Fields(gl[i]), " ") != strings.Join(strings.Fields(wl[i]), " ") {
			t.Errorf("line %d = %q, want %q", i, gl[i], wl[i])
		}
	}
}

// The JSON and YAML documents nest children inside their parent, in the
// order of the table, with the problem of a queue that cannot hang under
// root.
func TestTreeDocument(t *testing.T) {
	open := schedulingv1beta1.QueueStateOpen
	objs := []runtime.Object{
		treeQueue("root", "", 1, open, 0),
		withResources(treeQueue("team-b", "", 1, open, 0), "", "", ""),
		withResources(treeQueue("team-a", "", 2, open, 3), "cpu=16", "", "cpu=12"),
		treeQueue("team-a-dev", "team-a", 1, open, 0),
		treeQueue("lost", "gone", 1, open, 0),
	}
	want := treeDoc{Queues: []*treeNode{
		{Name: "root", State: "Open", Weight: 1, Children: []*treeNode{
			{Name: "team-a", Parent: "root", State: "Open", Weight: 2, PodGroups: treeCounts{Running: 3},
				Deserved: corev1.ResourceList{"cpu": resource.MustParse("16")}, Allocated: corev1.ResourceList{"cpu": resource.MustParse("12")},
				Children: []*treeNode{{Name: "team-a-dev", Parent: "team-a", State: "Open", Weight: 1, Children: []*treeNode{}}}},
			{Name: "team-b", Parent: "root", State: "Open", Weight: 1, Children: []*treeNode{}},
		}},
		{Name: "lost", Parent: "gone", Problem: `parent "gone" missing`, State: "Open", Weight: 1, Children: []*treeNode{}},
	}}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"json", "yaml"} {
		got := runTreeOutput(t, output, objs...)
		var doc treeDoc
		var err error
		if output == "json" {
			err = json.Unmarshal([]byte(got), &doc)
		} else {
			err = yaml.UnmarshalStrict([]byte(got), &doc)
		}
		if err != nil {
			t.Fatalf("-o %s: %v\n%s", output, err, got)
		}
		gotJSON, _ := json.Marshal(doc)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("-o %s:\n%s\nwant:\n%s", output, gotJSON, wantJSON)
		}
	}
	// The wire names are part of the documented shape.
	got := runTreeOutput(t, "json", objs...)
	for _, key := range []string{`"queues":`, `"name": "team-a-dev"`, `"parent": "team-a"`, `"podGroups":`, `"running": 3`,
		`"deserved":`, `"allocated":`, `"children": []`, `"problem": "parent \"gone\" missing"`} {
		if !strings.Contains(got, key) {
			t.Errorf("-o json lacks %s:\n%s", key, got)
		}
	}
	// Empty: an empty list, not null.
	if got := runTreeOutput(t, "json"); strings.Join(strings.Fields(got), "") != `{"queues":[]}` {
		t.Errorf("-o json of no queues = %q", got)
	}
}

func TestTreeValidate(t *testing.T) {
	for _, output := range []string{"", "wide", "json", "yaml"} {
		if err := (&TreeOptions{Output: output}).Validate(); err != nil {
			t.Errorf("-o %q: %v", output, err)
		}
	}
	for _, output := range []string{"name", "jsonpath={.x}", "JSON"} {
		err := (&TreeOptions{Output: output}).Validate()
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("-o %q: want one-line error, got %v", output, err)
		}
	}
}

// lockedBuffer is an output a running Run writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// --watch applies each change to the tree it printed and prints the whole
// tree again; an error event that ends the watch (an expired
// resourceVersion) ends Run with one line.
func TestTreeWatch(t *testing.T) {
	open := schedulingv1beta1.QueueStateOpen
	c := fake.NewSimpleClientset(treeQueue("root", "", 1, open, 0), treeQueue("team-a", "", 1, open, 0))
	// The fake lists without a resourceVersion; the watch starts from one.
	c.PrependReactor("list", "queues", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, &schedulingv1beta1.QueueList{ListMeta: metav1.ListMeta{ResourceVersion: "10"},
			Items: []schedulingv1beta1.Queue{*treeQueue("root", "", 1, open, 0), *treeQueue("team-a", "", 1, open, 0)}}, nil
	})
	fw := watch.NewFake()
	var watchedFrom string
	c.PrependWatchReactor("queues", func(action k8stesting.Action) (bool, watch.Interface, error) {
		watchedFrom = action.(k8stesting.WatchActionImpl).WatchRestrictions.ResourceVersion
		return true, fw, nil
	})
	var out, errOut lockedBuffer
	o := &TreeOptions{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Factory: clitesting.Factory{Volcano: c}, Watch: true}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- o.Run(context.Background()) }()
	poll := func(what string, cond func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond(out.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%s", what, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	poll("first tree", func(s string) bool { return strings.Contains(s, "team-a") })
	// A change the tree does not show prints nothing: had it printed, the
	// third tree below would be the one before team-a was deleted.
	relabelled := treeQueue("team-a", "", 1, open, 0)
	relabelled.ResourceVersion, relabelled.Labels = "11", map[string]string{"team": "a"}
	fw.Modify(relabelled)
	q := treeQueue("team-a-dev", "team-a", 1, open, 0)
	q.ResourceVersion = "12"
	fw.Add(q)
	poll("second tree", func(s string) bool {
		return strings.Contains(s, "\n\nQUEUE") && strings.Contains(s, "└── team-a-dev")
	})
	gone := treeQueue("team-a", "", 1, open, 0)
	gone.ResourceVersion = "13"
	fw.Delete(gone)
	poll("third tree", func(s string) bool { return strings.Count(s, "COMPLETED\n") == 3 })
	trees := strings.Split(out.String(), "\n\n")
	if last := trees[len(trees)-1]; !strings.Contains(last, `team-a-dev (parent "team-a" missing)`) {
		t.Errorf("after team-a was deleted:\n%s", last)
	}
	if watchedFrom != "10" {
		t.Errorf("watch from resourceVersion %q, want the list's 10", watchedFrom)
	}
	fw.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 10 (20)"})
	select {
	case err := <-done:
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "too old resource version") {
			t.Errorf("Run = %v, want one line about the expired watch", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end on the watch error")
	}
}

// Run ends without an error when its context ends.
func TestTreeWatchCancel(t *testing.T) {
	c := fake.NewSimpleClientset()
	c.PrependReactor("list", "queues", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, &schedulingv1beta1.QueueList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}, nil
	})
	c.PrependWatchReactor("queues", func(action k8stesting.Action) (bool, watch.Interface, error) {
		return true, watch.NewFake(), nil
	})
	var out, errOut lockedBuffer
	o := &TreeOptions{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, Factory: clitesting.Factory{Volcano: c}, Watch: true}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	// Once the (empty) tree is printed, Run is watching.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.HasPrefix(out.String(), "QUEUE") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v after cancel", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not end on cancel")
	}
}
