package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// These tests drive the queue controller's sync, the function the shared
// work loop calls per key, against informers filled from fake clientsets,
// and assert the writes it makes. They are unit tests of the sync's logic:
// what the API server makes of the writes is tested in test/queue.

// fakeQueueController is a controller initialized as serve initializes it,
// on fake clientsets whose objects its informers have listed.
type fakeQueueController struct {
	c        *Controller
	vc       *vcfake.Clientset
	recorder *record.FakeRecorder
}

func newFakeQueueController(t *testing.T, objs ...runtime.Object) *fakeQueueController {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	vc := vcfake.NewSimpleClientset(objs...)
	// The status is written with server-side apply, which the fake
	// tracker does not do for custom resources: answer it with the queue
	// as stored (the action is recorded all the same).
	vc.PrependReactor("patch", "queues", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchAction)
		if p.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		obj, err := vc.Tracker().Get(v1beta1.SchemeGroupVersion.WithResource("queues"), "", p.GetName())
		return true, obj, err
	})
	kube := kubefake.NewClientset()
	vf := vcinformers.NewSharedInformerFactory(vc, 0)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	rec := record.NewFakeRecorder(100)
	c, err := framework.Configure(Name, "--ensure-default-queues=false")
	if err != nil {
		t.Fatal(err)
	}
	qc := c.(*Controller)
	if err := qc.Initialize(ctx, &framework.ControllerOption{
		KubeClient: kube, VolcanoClient: vc,
		KubeInformerFactory: kf, VolcanoInformerFactory: vf,
		Recorder: rec, MetricsRegistry: prometheus.NewRegistry(), MaxRequeueNum: 3,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(qc.wq.ShutDown)
	t.Cleanup(qc.fast.ShutDown)
	vf.Start(ctx.Done())
	kf.Start(ctx.Done())
	for typ, ok := range vf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("cache of %v not synced", typ)
		}
	}
	// The podgroup counts are fed by the informer's handler, which may
	// lag behind the informer's own sync.
	if !cache.WaitForCacheSync(ctx.Done(), qc.synced...) {
		t.Fatal("the queue controller's caches did not sync")
	}
	vc.ClearActions()
	return &fakeQueueController{c: qc, vc: vc, recorder: rec}
}

// writes lists the writes the sync made, in order: "verb resource[/sub] name".
func (f *fakeQueueController) writes() []string {
	var out []string
	for _, a := range f.vc.Actions() {
		verb := a.GetVerb()
		if verb == "get" || verb == "list" || verb == "watch" {
			continue
		}
		res := a.GetResource().Resource
		if s := a.GetSubresource(); s != "" {
			res += "/" + s
		}
		name := ""
		switch a := a.(type) {
		case clienttesting.PatchAction:
			name = a.GetName()
		case clienttesting.DeleteAction:
			name = a.GetName()
		case clienttesting.CreateAction:
			if m, ok := a.GetObject().(metav1.Object); ok {
				name = m.GetName()
			}
		}
		out = append(out, verb+" "+res+" "+name)
	}
	return out
}

// patches returns the bodies of the patches of one type, in order.
func (f *fakeQueueController) patches(pt types.PatchType, sub string) []string {
	var out []string
	for _, a := range f.vc.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && p.GetPatchType() == pt && p.GetSubresource() == sub {
			out = append(out, string(p.GetPatch()))
		}
	}
	return out
}

// events drains the recorded events.
func (f *fakeQueueController) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func fakeQueue(name, parent string, state v1beta1.QueueState, marked bool) *v1beta1.Queue {
	q := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "10"}}
	q.Spec.Parent = parent
	q.Spec.Weight = 1
	q.Status.State = state
	if marked {
		q.Annotations = map[string]string{keys.ClosedByParent: "true"}
	}
	return q
}

// fakeCommand is a Command created at resourceVersion rv. Every Command of
// these tests has the same creationTimestamp, as Commands created within
// one second do: only the resourceVersion orders them.
func fakeCommand(name, action, queue string, uid types.UID, rv int) *busv1alpha1.Command {
	return &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			ResourceVersion: fmt.Sprint(rv), CreationTimestamp: metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))},
		Action: action,
		TargetObject: &metav1.OwnerReference{APIVersion: v1beta1.SchemeGroupVersion.String(), Kind: "Queue",
			Name: queue, UID: uid},
	}
}

// statusState is the state in the last status apply of the sync, "" if
// the status was not written.
func (f *fakeQueueController) statusState(t *testing.T) v1beta1.QueueState {
	t.Helper()
	applies := f.patches(types.ApplyPatchType, "status")
	if len(applies) == 0 {
		return ""
	}
	last := applies[len(applies)-1]
	for _, s := range []v1beta1.QueueState{v1beta1.QueueStateOpen, v1beta1.QueueStateClosed, v1beta1.QueueStateClosing, v1beta1.QueueStateUnknown} {
		if strings.Contains(last, `"state":"`+string(s)+`"`) {
			return s
		}
	}
	t.Fatalf("status apply without a state: %s", last)
	return ""
}

// TestSyncAppliesCommandsInCreationOrder: the Commands of a queue are
// applied oldest first by resourceVersion, whatever their names, and
// deleted oldest first once the state is written; the state is the one
// the last Command leaves.
func TestSyncAppliesCommandsInCreationOrder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, then string // actions, oldest first
		want        v1beta1.QueueState
	}{
		{"open then close", busv1alpha1.OpenQueueAction, busv1alpha1.CloseQueueAction, v1beta1.QueueStateClosed},
		{"close then open", busv1alpha1.CloseQueueAction, busv1alpha1.OpenQueueAction, ""}, // Open as before: no status write
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false)
			// Names sort against creation order: "z-old" is older than "a-new".
			f := newFakeQueueController(t, fakeQueue(keys.RootQueue, "", v1beta1.QueueStateOpen, false), q,
				fakeCommand("z-old", tc.first, "a", q.UID, 100),
				fakeCommand("a-new", tc.then, "a", q.UID, 101))
			if err := f.c.sync(context.Background(), "a"); err != nil {
				t.Fatal(err)
			}
			if got := f.statusState(t); got != tc.want {
				t.Errorf("status state written %q, want %q (writes %v)", got, tc.want, f.writes())
			}
			var deletes []string
			for _, w := range f.writes() {
				if strings.HasPrefix(w, "delete ") {
					deletes = append(deletes, w)
				}
			}
			if want := []string{"delete commands z-old", "delete commands a-new"}; !slices.Equal(deletes, want) {
				t.Errorf("deletes %v, want %v", deletes, want)
			}
			// The deletes come after the status: a crash before them
			// leaves the Commands to be applied again.
			if w := f.writes(); tc.want != "" && !strings.HasPrefix(w[0], "patch queues/status") {
				t.Errorf("writes %v: the status must be written before the Commands are deleted", w)
			}
		})
	}
}

// TestSyncDeletesStaleCommands: a Command for an earlier queue of the same
// name (another uid) is deleted without acting on the queue, with a
// StaleCommand warning.
func TestSyncDeletesStaleCommands(t *testing.T) {
	q := fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false)
	f := newFakeQueueController(t, fakeQueue(keys.RootQueue, "", v1beta1.QueueStateOpen, false), q,
		fakeCommand("stale", busv1alpha1.CloseQueueAction, "a", "earlier-uid", 100))
	if err := f.c.sync(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if w, want := f.writes(), []string{"delete commands stale"}; !slices.Equal(w, want) {
		t.Errorf("writes %v, want %v (the queue must stay Open, unwritten)", w, want)
	}
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], "StaleCommand") {
		t.Errorf("events %v, want one StaleCommand", ev)
	}
}

// TestSyncWaitsToOpenUnderClosedParent: an open Command for a queue whose
// parent is closed is neither applied nor deleted; the sync fails so that
// the work loop retries it.
func TestSyncWaitsToOpenUnderClosedParent(t *testing.T) {
	b := fakeQueue("b", "a", v1beta1.QueueStateClosed, false)
	f := newFakeQueueController(t, fakeQueue(keys.RootQueue, "", v1beta1.QueueStateOpen, false),
		fakeQueue("a", keys.RootQueue, v1beta1.QueueStateClosed, false), b,
		fakeCommand("open-b", busv1alpha1.OpenQueueAction, "b", b.UID, 100))
	err := f.c.sync(context.Background(), "b")
	if err == nil || !strings.Contains(err.Error(), "parent a is Closed") {
		t.Fatalf("sync error %v, want one saying the parent is closed", err)
	}
	for _, w := range f.writes() {
		if strings.HasPrefix(w, "delete ") {
			t.Errorf("the waiting Command was deleted: %v", f.writes())
		}
	}
	if s := f.statusState(t); s != "" && s != v1beta1.QueueStateClosed {
		t.Errorf("status written as %s, want the queue left Closed", s)
	}
}

// TestSyncRepairsHierarchy: a queue follows its parent closed (and is
// marked closed-by-parent), follows it back open only when it was marked,
// and a queue without a parent gets root.
func TestSyncRepairsHierarchy(t *testing.T) {
	root := fakeQueue(keys.RootQueue, "", v1beta1.QueueStateOpen, false)
	for _, tc := range []struct {
		name       string
		parent     *v1beta1.Queue
		child      *v1beta1.Queue
		wantState  v1beta1.QueueState // "" = no status write
		wantMerges []string           // merge patches of the queue, in order
	}{
		{name: "open child of a closed parent closes and is marked",
			parent: fakeQueue("a", keys.RootQueue, v1beta1.QueueStateClosed, false), child: fakeQueue("b", "a", v1beta1.QueueStateOpen, false),
			wantState:  v1beta1.QueueStateClosed,
			wantMerges: []string{`{"metadata":{"annotations":{"` + keys.ClosedByParent + `":"true"}}}`}},
		{name: "marked child of a reopened parent opens and loses the mark",
			parent: fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false), child: fakeQueue("b", "a", v1beta1.QueueStateClosed, true),
			wantState:  v1beta1.QueueStateOpen,
			wantMerges: []string{`{"metadata":{"annotations":{"` + keys.ClosedByParent + `":null}}}`}},
		{name: "unmarked closed child stays closed under an open parent",
			parent: fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false), child: fakeQueue("b", "a", v1beta1.QueueStateClosed, false)},
		{name: "a queue without a parent gets root",
			parent: fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false), child: fakeQueue("b", "", v1beta1.QueueStateOpen, false),
			wantMerges: []string{`{"spec":{"parent":"root"}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeQueueController(t, root, tc.parent, tc.child)
			if err := f.c.sync(context.Background(), "b"); err != nil {
				t.Fatal(err)
			}
			if got := f.statusState(t); got != tc.wantState {
				t.Errorf("status state written %q, want %q (writes %v)", got, tc.wantState, f.writes())
			}
			if got := f.patches(types.MergePatchType, ""); !slices.Equal(got, tc.wantMerges) {
				t.Errorf("merge patches %q, want %q", got, tc.wantMerges)
			}
			if tc.wantState == "" && len(tc.wantMerges) == 0 && len(f.writes()) > 0 {
				t.Errorf("a queue that is right was written: %v", f.writes())
			}
		})
	}
}

// TestSyncCountsPodGroupsOnce: the status carries the podgroup counts by
// phase; a sync of a queue whose status already says so writes nothing.
func TestSyncCountsPodGroupsOnce(t *testing.T) {
	pg := func(name string, phase v1beta1.PodGroupPhase) *v1beta1.PodGroup {
		return &v1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: v1beta1.PodGroupSpec{Queue: "a"}, Status: v1beta1.PodGroupStatus{Phase: phase}}
	}
	root := fakeQueue(keys.RootQueue, "", v1beta1.QueueStateOpen, false)
	pgs := []runtime.Object{pg("p1", v1beta1.PodGroupRunning), pg("p2", v1beta1.PodGroupRunning), pg("p3", v1beta1.PodGroupPending)}

	f := newFakeQueueController(t, append([]runtime.Object{root, fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false)}, pgs...)...)
	if err := f.c.sync(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	applies := f.patches(types.ApplyPatchType, "status")
	if len(applies) != 1 || !strings.Contains(applies[0], `"running":2`) || !strings.Contains(applies[0], `"pending":1`) {
		t.Fatalf("status applies %q, want one with running 2 and pending 1", applies)
	}

	counted := fakeQueue("a", keys.RootQueue, v1beta1.QueueStateOpen, false)
	counted.Status.Running, counted.Status.Pending = 2, 1
	f = newFakeQueueController(t, append([]runtime.Object{root, counted}, pgs...)...)
	if err := f.c.sync(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("a queue whose status is right was written: %v", w)
	}
}
