package eventhandler

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
)

// queue records the keys a handler puts, in order.
type queue struct{ keys []string }

func (q *queue) Add(key string) { q.keys = append(q.keys, key) }

// take returns the keys put since the last take, sorted.
func (q *queue) take() []string {
	k := q.keys
	q.keys = nil
	slices.Sort(k)
	return k
}

// observed records what the pod handler tells the expectations.
type observed struct{ events []string }

func (o *observed) CreationObserved(key string) { o.events = append(o.events, "create "+key) }
func (o *observed) DeletionObserved(key string, uid types.UID) {
	o.events = append(o.events, "delete "+key+" "+string(uid))
}

func (o *observed) take() []string {
	e := o.events
	o.events = nil
	return e
}

func expect(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

func nodeSet(ns, name string, mode slinkyv1beta1.ScalingMode) *slinkyv1beta1.NodeSet {
	return &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       slinkyv1beta1.NodeSetSpec{ScalingMode: mode},
	}
}

func nodeSetLister(t *testing.T, sets ...*slinkyv1beta1.NodeSet) slinkylisters.NodeSetLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range sets {
		if err := idx.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return slinkylisters.NewNodeSetLister(idx)
}

// controlledBy makes meta controlled by the NodeSet set (or by another
// kind, when kind is not NodeSet's).
func controlledBy(m *metav1.ObjectMeta, kind, set string) {
	m.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: slinkyv1beta1.SchemeGroupVersion.String(), Kind: kind, Name: set, UID: "owner-uid", Controller: ptr.To(true),
	}}
}

func pod(name, set, rv string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "slurm", Name: name, UID: types.UID(name + "-uid"), ResourceVersion: rv}}
	if set != "" {
		controlledBy(&p.ObjectMeta, slinkyv1beta1.NodeSetKind.Kind, set)
	}
	return p
}

func workerLabels(set string) map[string]string {
	return map[string]string{slinkyv1beta1.LabelAppName: slinkyv1beta1.AppName, slinkyv1beta1.LabelAppInstance: set}
}

func TestOwnerKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
		want string
	}{
		{"controlled by a NodeSet", func() metav1.ObjectMeta {
			m := metav1.ObjectMeta{Namespace: "slurm"}
			controlledBy(&m, slinkyv1beta1.NodeSetKind.Kind, "compute")
			return m
		}(), "slurm/compute"},
		{"controlled by another kind, though labelled as a worker", func() metav1.ObjectMeta {
			m := metav1.ObjectMeta{Namespace: "slurm", Labels: workerLabels("compute")}
			controlledBy(&m, "StatefulSet", "compute")
			return m
		}(), ""},
		{"controlled by a NodeSet of another API version", func() metav1.ObjectMeta {
			m := metav1.ObjectMeta{Namespace: "slurm"}
			controlledBy(&m, slinkyv1beta1.NodeSetKind.Kind, "compute")
			m.OwnerReferences[0].APIVersion = "slinky.slurm.net/v1alpha1"
			return m
		}(), ""},
		{"orphan with the worker labels", metav1.ObjectMeta{Namespace: "slurm", Labels: workerLabels("compute")}, "slurm/compute"},
		{"orphan with the app label but no instance", metav1.ObjectMeta{Namespace: "slurm", Labels: workerLabels("")}, ""},
		{"orphan of another app", metav1.ObjectMeta{Namespace: "slurm", Labels: map[string]string{
			slinkyv1beta1.LabelAppName: "web", slinkyv1beta1.LabelAppInstance: "compute"}}, ""},
		{"nothing", metav1.ObjectMeta{Namespace: "slurm"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OwnerKey(&tc.meta); got != tc.want {
				t.Errorf("OwnerKey = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNodeSet(t *testing.T) {
	q := &queue{}
	h := NodeSet(q)
	s := nodeSet("slurm", "compute", "")
	h.OnAdd(s, false)
	h.OnUpdate(s, s)
	h.OnDelete(s)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/gone", Obj: nodeSet("slurm", "gone", "")})
	expect(t, "NodeSet events", q.keys, "slurm/compute", "slurm/compute", "slurm/compute", "slurm/gone")
}

func TestPod(t *testing.T) {
	q, exp := &queue{}, &observed{}
	h := Pod(q, exp)

	// A controlled pod's creation fulfils an expected creation; an orphan's
	// does not, but still syncs the NodeSet that may adopt it.
	h.OnAdd(pod("w-0", "compute", "1"), false)
	expect(t, "add controlled: keys", q.take(), "slurm/compute")
	expect(t, "add controlled: expectations", exp.take(), "create slurm/compute")
	orphan := pod("w-1", "", "1")
	orphan.Labels = workerLabels("compute")
	h.OnAdd(orphan, false)
	expect(t, "add orphan: keys", q.take(), "slurm/compute")
	expect(t, "add orphan: expectations", exp.take())
	h.OnAdd(pod("web-0", "", "1"), false)
	expect(t, "add unrelated: keys", q.take())

	// A resync (same resourceVersion) syncs nothing.
	h.OnUpdate(pod("w-0", "compute", "1"), pod("w-0", "compute", "1"))
	expect(t, "resync", q.take())

	// A pod that starts terminating counts as deleted, once.
	old, cur := pod("w-0", "compute", "1"), pod("w-0", "compute", "2")
	cur.DeletionTimestamp = &metav1.Time{}
	h.OnUpdate(old, cur)
	expect(t, "terminating: keys", q.take(), "slurm/compute")
	expect(t, "terminating: expectations", exp.take(), "delete slurm/compute w-0-uid")
	again := cur.DeepCopy()
	again.ResourceVersion = "3"
	h.OnUpdate(cur, again)
	expect(t, "still terminating: keys", q.take(), "slurm/compute")
	expect(t, "still terminating: expectations", exp.take())

	// A pod taken over by another NodeSet syncs both; one released (no
	// owner, no labels) syncs the one it left.
	h.OnUpdate(pod("w-0", "compute", "1"), pod("w-0", "gpu", "2"))
	expect(t, "owner changed", q.take(), "slurm/compute", "slurm/gpu")
	h.OnUpdate(pod("w-0", "compute", "1"), pod("w-0", "", "2"))
	expect(t, "released", q.take(), "slurm/compute")

	// Deletion, seen or missed by the watch (a tombstone).
	h.OnDelete(pod("w-2", "compute", "5"))
	expect(t, "delete: keys", q.take(), "slurm/compute")
	expect(t, "delete: expectations", exp.take(), "delete slurm/compute w-2-uid")
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/w-3", Obj: pod("w-3", "compute", "5")})
	expect(t, "tombstone: keys", q.take(), "slurm/compute")
	expect(t, "tombstone: expectations", exp.take(), "delete slurm/compute w-3-uid")
	orphan.ResourceVersion = "9"
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/w-1", Obj: orphan})
	expect(t, "orphan tombstone: keys", q.take(), "slurm/compute")
	expect(t, "orphan tombstone: expectations", exp.take())
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/x", Obj: "not an object"})
	expect(t, "tombstone of no object", q.take())
}

func TestNode(t *testing.T) {
	q := &queue{}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
	onNode := func(p *corev1.Pod, node string) *corev1.Pod { p.Spec.NodeName = node; return p }
	for _, p := range []*corev1.Pod{
		onNode(pod("w-0", "compute", "1"), "n1"),
		onNode(pod("g-0", "gpu", "1"), "n1"),
		onNode(pod("web-0", "", "1"), "n1"),
		onNode(pod("w-1", "compute", "1"), "n2"),
	} {
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	sets := nodeSetLister(t,
		nodeSet("slurm", "compute", slinkyv1beta1.ScalingModeStatefulSet),
		nodeSet("slurm", "daemons", slinkyv1beta1.ScalingModeDaemonSet),
		nodeSet("other", "daemons", slinkyv1beta1.ScalingModeDaemonSet))
	daemon := func(ns *slinkyv1beta1.NodeSet) bool { return ns.Spec.ScalingMode == slinkyv1beta1.ScalingModeDaemonSet }
	h := Node(q, pods, sets, daemon)
	node := func() *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}, Annotations: map[string]string{}}}
	}

	h.OnAdd(node(), false)
	expect(t, "node added", q.take(), "other/daemons", "slurm/daemons")
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "n1", Obj: node()})
	expect(t, "node deleted", q.take(), "other/daemons", "slurm/daemons")

	// Status only: nothing.
	o, n := node(), node()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	h.OnUpdate(o, n)
	expect(t, "status only", q.take())

	// Cordoned: the NodeSets of the pods on n1 and the DaemonSet-mode ones.
	n = node()
	n.Spec.Unschedulable = true
	h.OnUpdate(o, n)
	expect(t, "cordoned", q.take(), "other/daemons", "slurm/compute", "slurm/daemons", "slurm/gpu")

	// Topology annotation: the pods' NodeSets only.
	n = node()
	n.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec] = "block1"
	h.OnUpdate(o, n)
	expect(t, "topology", q.take(), "slurm/compute", "slurm/gpu")

	// A label: the DaemonSet-mode NodeSets only.
	n = node()
	n.Labels["zone"] = "b"
	h.OnUpdate(o, n)
	expect(t, "label", q.take(), "other/daemons", "slurm/daemons")
}

func TestConfigMap(t *testing.T) {
	q := &queue{}
	h := ConfigMap(q, nodeSetLister(t, nodeSet("slurm", "compute", "")))
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "slurm", Name: name, ResourceVersion: rv}}
	}
	h.OnAdd(cm("compute-ssh-config", "1"), false)
	expect(t, "ours added", q.take(), "slurm/compute")
	h.OnUpdate(cm("compute-ssh-config", "1"), cm("compute-ssh-config", "2"))
	expect(t, "ours changed", q.take(), "slurm/compute")
	h.OnUpdate(cm("compute-ssh-config", "2"), cm("compute-ssh-config", "2"))
	expect(t, "resync", q.take())
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/compute-ssh-config", Obj: cm("compute-ssh-config", "2")})
	expect(t, "tombstone", q.take(), "slurm/compute")
	for _, name := range []string{"gpu-ssh-config", "-ssh-config", "compute", "compute-ssh-config-2"} {
		h.OnAdd(cm(name, "1"), false)
		expect(t, name, q.take())
	}
}

func TestOwnedKinds(t *testing.T) {
	owned := func(name string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Namespace: "slurm", Name: name}
		controlledBy(&m, slinkyv1beta1.NodeSetKind.Kind, "compute")
		return m
	}
	svc := &corev1.Service{ObjectMeta: owned("compute")}
	q := &queue{}

	// Services and PDBs sync their NodeSet on deletion only: it puts them
	// back.
	for _, h := range []cache.ResourceEventHandler{Service(q), PodDisruptionBudget(q)} {
		h.OnAdd(svc, false)
		h.OnUpdate(svc, svc)
		expect(t, "added or changed", q.take())
		h.OnDelete(svc)
		expect(t, "deleted", q.take(), "slurm/compute")
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/compute", Obj: svc})
		expect(t, "tombstone", q.take(), "slurm/compute")
	}

	// Revisions: every event.
	h := ControllerRevision(q)
	h.OnAdd(svc, false)
	h.OnUpdate(svc, svc)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/compute", Obj: svc})
	expect(t, "revision events", q.take(), "slurm/compute", "slurm/compute", "slurm/compute")
}

func TestSlinkyKinds(t *testing.T) {
	q := &queue{}
	sets := nodeSetLister(t, nodeSet("slurm", "a", ""), nodeSet("slurm", "b", ""), nodeSet("other", "c", ""))
	ctrl := &slinkyv1beta1.Controller{ObjectMeta: metav1.ObjectMeta{Namespace: "slurm", Name: "slurm"}}
	api := &slinkyv1beta1.RestApi{ObjectMeta: metav1.ObjectMeta{Namespace: "slurm", Name: "slurm"}}
	for name, h := range map[string]cache.ResourceEventHandler{"Controller": Controller(q, sets), "RestApi": RestApi(q, sets)} {
		var obj any = ctrl
		if name == "RestApi" {
			obj = api
		}
		h.OnAdd(obj, false)
		expect(t, name+" added", q.take(), "slurm/a", "slurm/b")
		h.OnUpdate(obj, obj)
		expect(t, name+" changed", q.take(), "slurm/a", "slurm/b")
		h.OnDelete(cache.DeletedFinalStateUnknown{Key: "slurm/slurm", Obj: obj})
		expect(t, name+" tombstone", q.take(), "slurm/a", "slurm/b")
	}
	h := Controller(q, sets)
	h.OnAdd(&slinkyv1beta1.Controller{ObjectMeta: metav1.ObjectMeta{Namespace: "empty", Name: "slurm"}}, false)
	expect(t, "namespace without NodeSets", q.take())
}
