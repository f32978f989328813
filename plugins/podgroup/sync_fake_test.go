package podgroup

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// These tests drive the podgroup controller's sync, the function the
// shared work loop calls per request, against informers filled from fake
// clientsets, and assert the writes it makes. What the API server makes of
// those writes is tested in test/podgroup.

type fakePodGroupController struct {
	c    *Controller
	kube *kubefake.Clientset
	vc   *vcfake.Clientset
}

func newFakePodGroupController(t *testing.T, kubeObjs, vcObjs []runtime.Object) *fakePodGroupController {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := kubefake.NewClientset(kubeObjs...)
	vc := vcfake.NewSimpleClientset(vcObjs...)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	vf := vcinformers.NewSharedInformerFactory(vc, 0)
	c, err := framework.Configure(Name)
	if err != nil {
		t.Fatal(err)
	}
	pc := c.(*Controller)
	if err := pc.Initialize(ctx, &framework.ControllerOption{
		KubeClient: kube, VolcanoClient: vc,
		KubeInformerFactory: kf, VolcanoInformerFactory: vf,
		Recorder: record.NewFakeRecorder(100), MetricsRegistry: prometheus.NewRegistry(), MaxRequeueNum: 3,
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.wq.ShutDown)
	kf.Start(ctx.Done())
	vf.Start(ctx.Done())
	for typ, ok := range kf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("cache of %v not synced", typ)
		}
	}
	for typ, ok := range vf.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("cache of %v not synced", typ)
		}
	}
	// The controller's own stores (the podgroup names) are filled by
	// event handlers, which may lag behind the informers' caches.
	if !cache.WaitForCacheSync(ctx.Done(), pc.synced...) {
		t.Fatal("the controller's caches did not sync")
	}
	kube.ClearActions()
	vc.ClearActions()
	return &fakePodGroupController{c: pc, kube: kube, vc: vc}
}

// writes lists every write of the sync as "verb resource namespace/name",
// the Volcano ones first, each set in order.
func (f *fakePodGroupController) writes() []string {
	var out []string
	for _, actions := range [][]clienttesting.Action{f.vc.Actions(), f.kube.Actions()} {
		for _, a := range actions {
			verb := a.GetVerb()
			if verb == "get" || verb == "list" || verb == "watch" {
				continue
			}
			name := ""
			switch a := a.(type) {
			case clienttesting.CreateAction:
				name = a.GetObject().(metav1.Object).GetName()
			case clienttesting.PatchAction:
				name = a.GetName()
			case clienttesting.DeleteAction:
				name = a.GetName()
			}
			out = append(out, verb+" "+a.GetResource().Resource+" "+a.GetNamespace()+"/"+name)
		}
	}
	return out
}

// created returns the podgroups the sync created.
func (f *fakePodGroupController) created() []*v1beta1.PodGroup {
	var out []*v1beta1.PodGroup
	for _, a := range f.vc.Actions() {
		if c, ok := a.(clienttesting.CreateAction); ok {
			if pg, ok := c.GetObject().(*v1beta1.PodGroup); ok {
				out = append(out, pg)
			}
		}
	}
	return out
}

// stored is every object of the fake clientsets now, as a new fixture's
// input: what the next sync would find once the informers caught up.
func (f *fakePodGroupController) stored(t *testing.T) (kubeObjs, vcObjs []runtime.Object) {
	t.Helper()
	ctx := context.Background()
	pods, err := f.kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		kubeObjs = append(kubeObjs, &pods.Items[i])
	}
	rss, err := f.kube.AppsV1().ReplicaSets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rss.Items {
		kubeObjs = append(kubeObjs, &rss.Items[i])
	}
	pgs, err := f.vc.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pgs.Items {
		vcObjs = append(vcObjs, &pgs.Items[i])
	}
	return kubeObjs, vcObjs
}

const ns = "ns"

func cpuPod(name string, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(name + "-uid"), Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{Name: "c", Image: "x",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func ownedBy(p *corev1.Pod, owner metav1.Object, kind string) *corev1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(),
		UID: owner.GetUID(), Controller: ptr.To(true)}}
	return p
}

func replicaSet(name string, replicas int32, annotations map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(name + "-uid"), Annotations: annotations, ResourceVersion: "1"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: "volcano"}}},
	}
}

func cpuOf(pg *v1beta1.PodGroup) string {
	if pg.Spec.MinResources == nil {
		return "<none>"
	}
	q := (*pg.Spec.MinResources)[corev1.ResourceCPU]
	return q.String()
}

// TestSyncPodGroupPerPodOrPerOwner: a bare pod gets a group of its own,
// owned by the pod; a pod with a controller gets its controller's group,
// owned by the controller; either pod is then annotated with the group.
func TestSyncPodGroupPerPodOrPerOwner(t *testing.T) {
	rs := replicaSet("web", 2, nil)
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		wantGroup string
		wantOwner types.UID
	}{
		{"bare pod", cpuPod("solo", "1"), GroupNamePrefix + "solo-uid", "solo-uid"},
		{"pod of a ReplicaSet", ownedBy(cpuPod("web-a", "1"), rs, "ReplicaSet"), GroupNamePrefix + "web-uid", "web-uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePodGroupController(t, []runtime.Object{tc.pod, rs}, nil)
			if err := f.c.sync(context.Background(), request{kind: podKind, namespace: ns, name: tc.pod.Name}); err != nil {
				t.Fatal(err)
			}
			want := []string{"create podgroups ns/" + tc.wantGroup, "patch pods ns/" + tc.pod.Name}
			if w := f.writes(); !slices.Equal(w, want) {
				t.Fatalf("writes %v, want %v", w, want)
			}
			pg := f.created()[0]
			if ref := metav1.GetControllerOf(pg); ref == nil || ref.UID != tc.wantOwner {
				t.Errorf("group controlled by %v, want uid %s", ref, tc.wantOwner)
			}
			pod, err := f.kube.CoreV1().Pods(ns).Get(context.Background(), tc.pod.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := pod.Annotations[keys.KubeGroupName]; got != tc.wantGroup {
				t.Errorf("pod annotated with group %q, want %q", got, tc.wantGroup)
			}
		})
	}
}

// TestSyncPodLeavesOthersAlone: a pod of another scheduler, a pod that
// already names a group, and a finished pod cause no write.
func TestSyncPodLeavesOthersAlone(t *testing.T) {
	other := cpuPod("other", "1")
	other.Spec.SchedulerName = "default-scheduler"
	grouped := cpuPod("grouped", "1")
	grouped.Annotations = map[string]string{keys.KubeGroupName: "someone-elses"}
	done := cpuPod("done", "1")
	done.Status.Phase = corev1.PodSucceeded
	for _, p := range []*corev1.Pod{other, grouped, done} {
		t.Run(p.Name, func(t *testing.T) {
			f := newFakePodGroupController(t, []runtime.Object{p}, nil)
			if err := f.c.sync(context.Background(), request{kind: podKind, namespace: ns, name: p.Name}); err != nil {
				t.Fatal(err)
			}
			if w := f.writes(); len(w) != 0 {
				t.Errorf("writes %v, want none", w)
			}
		})
	}
}

// TestSyncReplicaSetTemplateChoice: the group of a ReplicaSet is built
// from one live pod, the first by name, whatever order the cache lists
// them in; a Failed pod (evicted) is never the template and is not
// annotated. Every live member is annotated.
func TestSyncReplicaSetTemplateChoice(t *testing.T) {
	rs := replicaSet("web", 3, map[string]string{keys.QueueName: "team-a"})
	evicted := ownedBy(cpuPod("web-0", "8"), rs, "ReplicaSet")
	evicted.Status.Phase = corev1.PodFailed
	pods := []runtime.Object{
		ownedBy(cpuPod("web-c", "3"), rs, "ReplicaSet"),
		ownedBy(cpuPod("web-a", "1"), rs, "ReplicaSet"),
		evicted,
		ownedBy(cpuPod("web-b", "2"), rs, "ReplicaSet"),
	}
	f := newFakePodGroupController(t, append(pods, rs), nil)
	if err := f.c.sync(context.Background(), request{kind: replicaSetKind, namespace: ns, name: "web"}); err != nil {
		t.Fatal(err)
	}
	created := f.created()
	if len(created) != 1 {
		t.Fatalf("created %d groups, want 1 (writes %v)", len(created), f.writes())
	}
	pg := created[0]
	if pg.Name != GroupNamePrefix+"web-uid" || cpuOf(pg) != "1" || pg.Spec.Queue != "team-a" {
		t.Errorf("group %s cpu %s queue %q, want %s built from web-a (cpu 1) in team-a", pg.Name, cpuOf(pg), pg.Spec.Queue, GroupNamePrefix+"web-uid")
	}
	var annotated []string
	for _, w := range f.writes() {
		if name, ok := strings.CutPrefix(w, "patch pods ns/"); ok {
			annotated = append(annotated, name)
		}
	}
	sort.Strings(annotated)
	if want := []string{"web-a", "web-b", "web-c"}; !slices.Equal(annotated, want) {
		t.Errorf("annotated %v, want %v", annotated, want)
	}

	// The next sync, once the cache shows the group and the annotations,
	// finds everything right: no write.
	kubeObjs, vcObjs := f.stored(t)
	f = newFakePodGroupController(t, kubeObjs, vcObjs)
	if err := f.c.sync(context.Background(), request{kind: replicaSetKind, namespace: ns, name: "web"}); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("a correct group caused writes %v", w)
	}
}

// TestSyncReplicaSetFollowsTemplate: a group that no longer matches its
// template (another cpu request) is patched, not recreated, and only in
// the fields that changed; a ReplicaSet scaled to zero loses its group.
func TestSyncReplicaSetFollowsTemplate(t *testing.T) {
	// A queue named, so that the stored group needs no server defaulting
	// (the fake API does not apply the CRD's default queue).
	rs := replicaSet("web", 1, map[string]string{keys.QueueName: "team-a"})
	pod := ownedBy(cpuPod("web-a", "4"), rs, "ReplicaSet")
	pod.Annotations = map[string]string{keys.KubeGroupName: GroupNamePrefix + "web-uid"}
	f0 := newFakePodGroupController(t, []runtime.Object{ownedBy(cpuPod("web-a", "1"), rs, "ReplicaSet"), rs}, nil)
	if err := f0.c.sync(context.Background(), request{kind: replicaSetKind, namespace: ns, name: "web"}); err != nil {
		t.Fatal(err)
	}
	_, groups := f0.stored(t)
	if len(groups) != 1 {
		t.Fatalf("setup: %d groups", len(groups))
	}

	f := newFakePodGroupController(t, []runtime.Object{pod, rs}, groups)
	if err := f.c.sync(context.Background(), request{kind: replicaSetKind, namespace: ns, name: "web"}); err != nil {
		t.Fatal(err)
	}
	if w, want := f.writes(), []string{"patch podgroups ns/" + GroupNamePrefix + "web-uid"}; !slices.Equal(w, want) {
		t.Fatalf("writes %v, want %v", w, want)
	}
	// The group is read whole from the API (the cache holds its name),
	// then patched.
	var patch string
	for _, a := range f.vc.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok {
			patch = string(p.GetPatch())
		}
	}
	if want := `{"spec":{"minResources":{"cpu":"4","requests.cpu":"4"}}}`; patch != want {
		t.Errorf("patch %s, want %s", patch, want)
	}

	scaled := replicaSet("web", 0, nil)
	f = newFakePodGroupController(t, []runtime.Object{scaled}, groups)
	if err := f.c.sync(context.Background(), request{kind: replicaSetKind, namespace: ns, name: "web"}); err != nil {
		t.Fatal(err)
	}
	if w, want := f.writes(), []string{"delete podgroups ns/" + GroupNamePrefix + "web-uid"}; !slices.Equal(w, want) {
		t.Errorf("writes %v, want %v", w, want)
	}
}

// TestSyncStatefulSetTemplateChoice: during a rolling update the group of
// a StatefulSet is built from a pod of the update revision, even when a
// pod of the old revision comes first by name.
func TestSyncStatefulSetTemplateChoice(t *testing.T) {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns, UID: "db-uid", ResourceVersion: "1"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: "volcano"}}},
		Status: appsv1.StatefulSetStatus{CurrentRevision: "db-old", UpdateRevision: "db-new"},
	}
	old := ownedBy(cpuPod("db-0", "4"), sts, "StatefulSet")
	old.Labels[appsv1.ControllerRevisionHashLabelKey] = "db-old"
	updated := ownedBy(cpuPod("db-1", "2"), sts, "StatefulSet")
	updated.Labels[appsv1.ControllerRevisionHashLabelKey] = "db-new"
	f := newFakePodGroupController(t, []runtime.Object{old, updated, sts}, nil)
	if err := f.c.sync(context.Background(), request{kind: statefulSetKind, namespace: ns, name: "db"}); err != nil {
		t.Fatal(err)
	}
	created := f.created()
	if len(created) != 1 || cpuOf(created[0]) != "2" {
		var cpus []string
		for _, pg := range created {
			cpus = append(cpus, cpuOf(pg))
		}
		t.Fatalf("created groups with cpu %v, want one built from db-1 (cpu 2)", cpus)
	}
}
