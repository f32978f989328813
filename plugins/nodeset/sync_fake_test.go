package nodeset

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/plugins/nodeset/eventhandler"
)

// These tests drive the NodeSet controller's sync, the function the shared
// work loop calls per key, against informers filled from fake clientsets
// and a fake Slurm, and assert the pod writes and Slurm calls it makes.
// The informers are stopped once they have listed: the cache then lags the
// writes as a real one may, and a test says when it catches up. What the
// API server and a real slurmctld make of the writes is tested in
// test/nodeset.

// fakeSlurm is a Slurm whose node states a test sets; it records drains.
type fakeSlurm struct {
	mu      sync.Mutex
	nodes   map[string]slurm.NodeState
	drained bool // what IsDrained answers
	drains  []string
	// byState makes IsDrained answer from the node's state, as Slurm
	// does (drained and idle; a node it does not know runs nothing), and
	// Drain mark the node DRAIN.
	byState bool
	// resv are the reservations Slurm holds, by name; resvErr, when set,
	// is what ReservationsSupported answers (a slurmrestd that cannot
	// write them); resvCalls records the reservation writes.
	resv      map[string]slurm.Reservation
	resvErr   error
	resvCalls []string
}

// The fake is a Slurm as the controller sees one: a Client that writes
// reservations (features and topology it does not answer for, as a
// Slurm whose client has neither).
var (
	_ slurm.Client            = &fakeSlurm{}
	_ slurm.ReservationClient = &fakeSlurm{}
)

func (f *fakeSlurm) ReservationsSupported(context.Context) error { return f.resvErr }
func (f *fakeSlurm) Reservation(_ context.Context, name string) (slurm.Reservation, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.resv[name]
	return r, ok, nil
}
func (f *fakeSlurm) CreateReservation(_ context.Context, r slurm.Reservation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.resv[r.Name]; ok {
		return fmt.Errorf("reservation %s exists", r.Name)
	}
	if f.resv == nil {
		f.resv = map[string]slurm.Reservation{}
	}
	// As Slurm: whole minutes, and SPEC_NODES for named nodes.
	r.End = r.Start.Add(time.Duration(math.Ceil(r.End.Sub(r.Start).Minutes())) * time.Minute)
	r.Flags = append(slices.Clone(r.Flags), "SPEC_NODES")
	slices.Sort(r.Flags)
	f.resv[r.Name] = r
	f.resvCalls = append(f.resvCalls, "create "+r.Name+" "+strings.Join(r.Nodes, ","))
	return nil
}
func (f *fakeSlurm) UpdateReservation(_ context.Context, r slurm.Reservation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.resv[r.Name]
	if !ok {
		return fmt.Errorf("no reservation %s", r.Name)
	}
	if r.Nodes != nil {
		cur.Nodes = r.Nodes
	}
	if !r.Start.IsZero() {
		cur.Start, cur.End = r.Start, r.End
	}
	f.resv[r.Name] = cur
	f.resvCalls = append(f.resvCalls, "update "+r.Name+" "+strings.Join(r.Nodes, ","))
	return nil
}
func (f *fakeSlurm) DeleteReservation(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.resv, name)
	f.resvCalls = append(f.resvCalls, "delete "+name)
	return nil
}

func (f *fakeSlurm) Refresh(context.Context) error { return nil }
func (f *fakeSlurm) Nodes() map[string]slurm.NodeState {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]slurm.NodeState{}
	for k, v := range f.nodes {
		out[k] = v
	}
	return out
}
func (f *fakeSlurm) Node(name string) (slurm.NodeState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.nodes[name]
	return s, ok
}
func (f *fakeSlurm) Drain(_ context.Context, name, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.drains = append(f.drains, name+": "+reason)
	if st, ok := f.nodes[name]; ok && f.byState && !st.Drain() {
		st.Flags = append(slices.Clone(st.Flags), "DRAIN")
		f.nodes[name] = st
	}
	return nil
}
func (f *fakeSlurm) Undrain(context.Context, string) error { return nil }
func (f *fakeSlurm) IsDrained(_ context.Context, name string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byState {
		st, ok := f.nodes[name]
		return !ok || st.Drained(), nil
	}
	return f.drained, nil
}
func (f *fakeSlurm) JobEndDeadline(context.Context, string) (time.Time, error) {
	return time.Time{}, nil
}

type fakeNodeSetController struct {
	c     *Controller
	kube  *kubefake.Clientset
	vc    *vcfake.Clientset
	slurm *fakeSlurm
	// revisions is the revision cache, for a test that makes it lag.
	revisions cache.Indexer
}

const (
	testNamespace = "slurm"
	testKey       = testNamespace + "/w"
)

// testNodeSet is a NodeSet without disruption protection, so that its
// syncs write only what scaling asks for.
func testNodeSet(replicas int32) *slinkyv1beta1.NodeSet {
	ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: testNamespace, UID: "w-uid", Generation: 1}}
	ns.Spec.Replicas = ptr.To(replicas)
	ns.Spec.WorkloadDisruptionProtection = ptr.To(false)
	ns.Spec.Slurmd = corev1.Container{Image: "slurmd:1"}
	ns.Status.ObservedGeneration = 1
	return ns
}

// currentRevision is the revision hash of the NodeSet's template, and the
// revision a sync would make for it.
func currentRevision(t *testing.T, ns *slinkyv1beta1.NodeSet) (string, runtime.Object) {
	t.Helper()
	data, err := revisionData(ns)
	if err != nil {
		t.Fatal(err)
	}
	r := newRevision(ns, data, 1, 0)
	return hashOf(ns, r), r
}

// runningPod is the pod of ordinal, made from the current template, running
// and ready.
func runningPod(t *testing.T, ns *slinkyv1beta1.NodeSet, ordinal int) *corev1.Pod {
	t.Helper()
	hash, _ := currentRevision(t, ns)
	p := newPod(ns, nil, ordinal, hash)
	p.UID = types.UID(p.Name + "-uid")
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return p
}

func newFakeNodeSetController(t *testing.T, sl *fakeSlurm, ns *slinkyv1beta1.NodeSet, kubeObjs ...runtime.Object) *fakeNodeSetController {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, rev := currentRevision(t, ns)
	kube := kubefake.NewClientset(append(kubeObjs, rev)...)
	vc := vcfake.NewSimpleClientset(ns)
	// The status is written with server-side apply, which the fake
	// tracker does not do for custom resources: answer it with the
	// NodeSet as stored.
	vc.PrependReactor("patch", "nodesets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchAction)
		if p.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		obj, err := vc.Tracker().Get(slinkyv1beta1.SchemeGroupVersion.WithResource("nodesets"), p.GetNamespace(), p.GetName())
		return true, obj, err
	})
	// The API server serves NodeSets (discovery, asked at Initialize).
	kube.Resources = []*metav1.APIResourceList{{GroupVersion: slinkyv1beta1.SchemeGroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "nodesets", Namespaced: true, Kind: "NodeSet"}}}}
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	vf := vcinformers.NewSharedInformerFactory(vc, 0)
	c := New(Config{Slurm: sl})
	if err := c.Initialize(ctx, &framework.ControllerOption{
		KubeClient: kube, VolcanoClient: vc,
		KubeInformerFactory: kf, VolcanoInformerFactory: vf,
		Recorder: record.NewFakeRecorder(1000), MaxRequeueNum: -1,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.wq.ShutDown)
	// The informers list once and stop: the caches then hold what the
	// fixture holds until a test adds to them.
	stop := make(chan struct{})
	revisions := kf.Apps().V1().ControllerRevisions().Informer().GetIndexer()
	kf.Start(stop)
	vf.Start(stop)
	// Asked every millisecond, not at WaitForCacheSync's 100 ms: the fake
	// lists at once, and FuzzSyncDecisions builds a controller per input.
	// (WaitForCacheSync with a closed channel asks once and answers.)
	asked := make(chan struct{})
	close(asked)
	synced := func() (bool, string) {
		for typ, ok := range kf.WaitForCacheSync(asked) {
			if !ok {
				return false, typ.String()
			}
		}
		for typ, ok := range vf.WaitForCacheSync(asked) {
			if !ok {
				return false, typ.String()
			}
		}
		return true, ""
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		ok, typ := synced()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache of %v not synced", typ)
		}
	}
	close(stop)
	kf.Shutdown()
	vf.Shutdown()
	kube.ClearActions()
	return &fakeNodeSetController{c: c, kube: kube, vc: vc, slurm: sl, revisions: revisions}
}

func (f *fakeNodeSetController) sync(t *testing.T) {
	t.Helper()
	if _, err := f.c.sync(context.Background(), testKey); err != nil {
		t.Fatal(err)
	}
}

// podWrites are the sync's pod creations and deletions ("create w-0",
// "delete w-1") and cordons ("cordon w-1"), sorted, and forgets them.
func (f *fakeNodeSetController) podWrites() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		if a.GetResource().Resource != "pods" {
			continue
		}
		switch a := a.(type) {
		case clienttesting.CreateAction:
			out = append(out, "create "+a.GetObject().(*corev1.Pod).Name)
		case clienttesting.DeleteAction:
			out = append(out, "delete "+a.GetName())
		case clienttesting.PatchAction:
			if strings.Contains(string(a.GetPatch()), `"`+slinkyv1beta1.AnnotationPodCordon+`":"true"`) {
				out = append(out, "cordon "+a.GetName())
			}
		}
	}
	f.kube.ClearActions()
	sort.Strings(out)
	return out
}

// observe puts the pods the fake API server holds into the pod cache and
// tells the controller, as the informer would once it caught up.
func (f *fakeNodeSetController) observe(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		p, err := f.kube.CoreV1().Pods(testNamespace).Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.c.podIndex.Add(p); err != nil {
			t.Fatal(err)
		}
		eventhandler.Pod(f.c.wq, f.c.exp).OnAdd(p, false)
	}
	f.kube.ClearActions()
}

// TestSyncExpectationsBlockDuplicateCreates: a scale-out creates the
// missing pods once; until the cache shows every one of them, further
// syncs create nothing, though the cache still counts too few pods.
func TestSyncExpectationsBlockDuplicateCreates(t *testing.T) {
	f := newFakeNodeSetController(t, &fakeSlurm{}, testNodeSet(3))
	f.sync(t)
	if w, want := f.podWrites(), []string{"create w-0", "create w-1", "create w-2"}; !slices.Equal(w, want) {
		t.Fatalf("first sync: pod writes %v, want %v", w, want)
	}
	f.sync(t)
	if w := f.podWrites(); len(w) != 0 {
		t.Fatalf("sync with three creations in flight wrote %v", w)
	}
	f.observe(t, "w-0", "w-1")
	f.sync(t)
	if w := f.podWrites(); len(w) != 0 {
		t.Fatalf("sync with one creation in flight wrote %v", w)
	}
	if f.c.exp.satisfied(testKey) {
		t.Fatal("expectations satisfied with one creation unobserved")
	}
	f.observe(t, "w-2")
	f.sync(t)
	if w := f.podWrites(); len(w) != 0 {
		t.Fatalf("sync with all pods in the cache wrote %v", w)
	}
	if !f.c.exp.satisfied(testKey) {
		t.Fatal("expectations pending after every creation was observed")
	}
}

// TestSyncScaleOutLowestFreeOrdinals: missing pods take the lowest free
// ordinals; pods already there stay.
func TestSyncScaleOutLowestFreeOrdinals(t *testing.T) {
	ns := testNodeSet(4)
	f := newFakeNodeSetController(t, &fakeSlurm{}, ns, runningPod(t, ns, 1), runningPod(t, ns, 3))
	f.sync(t)
	if w, want := f.podWrites(), []string{"create w-0", "create w-2"}; !slices.Equal(w, want) {
		t.Fatalf("pod writes %v, want %v", w, want)
	}
}

// TestSyncScaleInChoice: a scale-in retires, in order of preference, a pod
// already cordoned, one whose Slurm node runs nothing, then the highest
// ordinal; it cordons the pod and drains its node, and deletes the pod
// only once Slurm says the node is drained.
func TestSyncScaleInChoice(t *testing.T) {
	idle := slurm.NodeState{Base: "idle"}
	busy := slurm.NodeState{Base: "allocated"}
	for _, tc := range []struct {
		name      string
		nodes     map[string]slurm.NodeState
		cordoned  string
		drained   bool
		wantWrite []string
		wantDrain []string
	}{
		{name: "all idle: the highest ordinal",
			nodes:     map[string]slurm.NodeState{"w-0": idle, "w-1": idle, "w-2": idle},
			wantWrite: []string{"cordon w-2"}, wantDrain: []string{"w-2: " + reasonScaleIn}},
		{name: "the highest ordinal busy: an idle one",
			nodes:     map[string]slurm.NodeState{"w-0": busy, "w-1": idle, "w-2": busy},
			wantWrite: []string{"cordon w-1"}, wantDrain: []string{"w-1: " + reasonScaleIn}},
		{name: "a cordoned pod first, busy or not",
			nodes: map[string]slurm.NodeState{"w-0": busy, "w-1": idle, "w-2": idle}, cordoned: "w-0",
			wantDrain: []string{"w-0: " + reasonScaleIn}},
		{name: "drained: the pod is deleted",
			nodes: map[string]slurm.NodeState{"w-0": idle, "w-1": idle, "w-2": idle}, drained: true,
			wantWrite: []string{"cordon w-2", "delete w-2"}, wantDrain: []string{"w-2: " + reasonScaleIn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testNodeSet(2)
			var pods []runtime.Object
			for i := range 3 {
				p := runningPod(t, ns, i)
				if p.Name == tc.cordoned {
					p.Annotations[slinkyv1beta1.AnnotationPodCordon] = "true"
				}
				pods = append(pods, p)
			}
			sl := &fakeSlurm{nodes: tc.nodes, drained: tc.drained}
			f := newFakeNodeSetController(t, sl, ns, pods...)
			f.sync(t)
			if w := f.podWrites(); !slices.Equal(w, tc.wantWrite) {
				t.Errorf("pod writes %v, want %v", w, tc.wantWrite)
			}
			if !slices.Equal(sl.drains, tc.wantDrain) {
				t.Errorf("drains %v, want %v", sl.drains, tc.wantDrain)
			}
		})
	}
}

// TestSyncNothingToDo: a NodeSet whose pods are all there, current and
// wanted causes no pod write and no drain.
func TestSyncNothingToDo(t *testing.T) {
	ns := testNodeSet(2)
	sl := &fakeSlurm{nodes: map[string]slurm.NodeState{"w-0": {Base: "idle"}, "w-1": {Base: "allocated"}}}
	f := newFakeNodeSetController(t, sl, ns, runningPod(t, ns, 0), runningPod(t, ns, 1))
	f.sync(t)
	if w := f.podWrites(); len(w) != 0 {
		t.Errorf("pod writes %v, want none", w)
	}
	if len(sl.drains) != 0 {
		t.Errorf("drains %v, want none", sl.drains)
	}
}

// orphanRevision removes the owner and the hash label of the NodeSet's
// revision in the fake API server, as 'kubectl patch' would, and returns
// it as stored.
func (f *fakeNodeSetController) orphanRevision(t *testing.T, ns *slinkyv1beta1.NodeSet) *appsv1.ControllerRevision {
	t.Helper()
	_, obj := currentRevision(t, ns)
	name := obj.(*appsv1.ControllerRevision).Name
	patch := `{"metadata":{"ownerReferences":null,"labels":{"` + revisionHashLabel + `":null}}}`
	r, err := f.kube.AppsV1().ControllerRevisions(testNamespace).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.kube.ClearActions()
	return r
}

// revisionsAfterSync syncs and returns the revision writes it made
// ("create NAME", "patch NAME") and the revisions the API server then
// holds ("NAME hash=HASH controller=UID").
func (f *fakeNodeSetController) revisionsAfterSync(t *testing.T) (writes, stored []string) {
	t.Helper()
	f.sync(t)
	for _, a := range f.kube.Actions() {
		if a.GetResource().Resource != "controllerrevisions" {
			continue
		}
		switch a := a.(type) {
		case clienttesting.CreateAction:
			writes = append(writes, "create "+a.GetObject().(*appsv1.ControllerRevision).Name)
		case clienttesting.PatchAction:
			writes = append(writes, "patch "+a.GetName())
		case clienttesting.DeleteAction:
			writes = append(writes, "delete "+a.GetName())
		}
	}
	list, err := f.kube.AppsV1().ControllerRevisions(testNamespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Items {
		owner := "none"
		if ref := metav1.GetControllerOf(&r); ref != nil {
			owner = string(ref.UID)
		}
		stored = append(stored, r.Name+" hash="+r.Labels[revisionHashLabel]+" controller="+owner)
	}
	sort.Strings(stored)
	return writes, stored
}

// TestSyncAdoptsOrphanRevision: a revision of the NodeSet's template that
// lost its owner and hash label is adopted back (one patch) and is the
// update revision; no second revision is made.
func TestSyncAdoptsOrphanRevision(t *testing.T) {
	ns := testNodeSet(0)
	f := newFakeNodeSetController(t, &fakeSlurm{}, ns)
	orphan := f.orphanRevision(t, ns)
	if err := f.revisions.Update(orphan); err != nil {
		t.Fatal(err)
	}
	hash, _ := currentRevision(t, ns)
	writes, stored := f.revisionsAfterSync(t)
	if want := []string{"patch " + orphan.Name}; !slices.Equal(writes, want) {
		t.Errorf("revision writes %v, want %v", writes, want)
	}
	if want := []string{orphan.Name + " hash=" + hash + " controller=w-uid"}; !slices.Equal(stored, want) {
		t.Errorf("revisions %v, want %v", stored, want)
	}
}

// TestSyncAdoptsOrphanRevisionTheCacheMissed: when the revision was
// orphaned after the cache last showed it (here the cache shows none), the
// name the sync would create is taken by the orphan with the same template:
// that is the NodeSet's revision, adopted, not a hash collision that would
// leave two revisions of one template behind.
func TestSyncAdoptsOrphanRevisionTheCacheMissed(t *testing.T) {
	ns := testNodeSet(0)
	f := newFakeNodeSetController(t, &fakeSlurm{}, ns)
	orphan := f.orphanRevision(t, ns)
	if err := f.revisions.Delete(orphan); err != nil {
		t.Fatal(err)
	}
	hash, _ := currentRevision(t, ns)
	writes, stored := f.revisionsAfterSync(t)
	if want := []string{"create " + orphan.Name, "patch " + orphan.Name}; !slices.Equal(writes, want) {
		t.Errorf("revision writes %v, want %v (the create is refused: the name is taken)", writes, want)
	}
	if want := []string{orphan.Name + " hash=" + hash + " controller=w-uid"}; !slices.Equal(stored, want) {
		t.Errorf("revisions %v, want %v", stored, want)
	}
}

// TestSyncScaleOutHugeReplicas: the largest replicas the schema allows
// creates one burst of pods per sync, lowest ordinals first, and the sync
// allocates no more than one that asks for exactly one burst (it once built
// a slice of every missing ordinal: gigabytes for 2^31-1).
func TestSyncScaleOutHugeReplicas(t *testing.T) {
	allocated := func(replicas int32) (uint64, []string) {
		f := newFakeNodeSetController(t, &fakeSlurm{}, testNodeSet(replicas))
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		f.sync(t)
		goruntime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, f.podWrites()
	}
	one, _ := allocated(burst)
	huge, w := allocated(math.MaxInt32)
	if len(w) != burst {
		t.Fatalf("one sync created %d pods, want the burst of %d", len(w), burst)
	}
	for i := range burst {
		if !slices.Contains(w, fmt.Sprintf("create w-%d", i)) {
			t.Fatalf("pod w-%d not created; writes %v", i, w)
		}
	}
	// A bound on allocation, not on time. The fake clientset allocates
	// much per create, the same in both syncs; 2^31 ordinals would be
	// 16 GiB more.
	if huge > one+64<<20 {
		t.Fatalf("a sync towards %d replicas allocated %d MiB, one towards %d %d MiB", math.MaxInt32, huge>>20, burst, one>>20)
	}
}
