package framework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reader is a controller that only declares what it reads.
type reader struct {
	Controller
	reads []CacheRead
}

func (r reader) CacheReads() []CacheRead { return r.reads }

func readsNodeName() CacheRead {
	return ReadsOnly(func(dst, src *corev1.Pod) { dst.Spec.NodeName = src.Spec.NodeName })
}

func readsPhase() CacheRead {
	return ReadsOnly(func(dst, src *corev1.Pod) { dst.Status.Phase = src.Status.Phase })
}

func fullPod() *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "u1", ResourceVersion: "7",
			Labels: map[string]string{"app": "a"},
			Annotations: map[string]string{"volcano.sh/queue-name": "q",
				corev1.LastAppliedConfigAnnotation: `{"a":"very long copy of the object"}`},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: "u0"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1", SchedulerName: "volcano",
			Containers: []corev1.Container{{Name: "c", Image: "img",
				Env:       []corev1.EnvVar{{Name: "K", Value: "V"}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("1")}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"},
	}
}

// The union of what the controllers read is kept with the metadata; the
// rest, managedFields and kubectl's last-applied copy go.
func TestCacheTransformKeepsUnionOfReads(t *testing.T) {
	transform := CacheTransform(reader{reads: []CacheRead{readsNodeName()}}, reader{reads: []CacheRead{readsPhase()}})
	out, err := transform(fullPod())
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "u1", ResourceVersion: "7",
			Labels:          map[string]string{"app": "a"},
			Annotations:     map[string]string{"volcano.sh/queue-name": "q"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", UID: "u0"}},
		},
		Spec:   corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("transformed pod\n got %+v\nwant %+v", got, want)
	}
	// Informers may hand an object to the transform twice.
	again, err := transform(got.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(again, got) {
		t.Errorf("not idempotent:\n%+v\n%+v", again, got)
	}
}

// One controller that reads a type whole keeps it whole (but for
// managedFields), whatever the others declared.
func TestCacheTransformReadsAllWins(t *testing.T) {
	transform := CacheTransform(reader{reads: []CacheRead{readsNodeName()}}, reader{reads: []CacheRead{ReadsAll[corev1.Pod]()}})
	out, err := transform(fullPod())
	if err != nil {
		t.Fatal(err)
	}
	want := fullPod()
	want.ManagedFields = nil
	if !equality.Semantic.DeepEqual(out, want) {
		t.Errorf("pod read whole was changed:\n got %+v\nwant %+v", out, want)
	}
}

// A type nobody declared is kept whole but for managedFields; objects
// without metadata pass untouched.
func TestCacheTransformUndeclaredType(t *testing.T) {
	transform := CacheTransform(reader{reads: []CacheRead{readsNodeName()}})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}},
		Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"img"}}}}}
	out, err := transform(node)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Node)
	if got.ManagedFields != nil || len(got.Status.Images) != 1 || got.Annotations[corev1.LastAppliedConfigAnnotation] != "{}" {
		t.Errorf("undeclared type changed beyond managedFields: %+v", got)
	}
	if out, _ := transform("not an object"); out != "not an object" {
		t.Errorf("non-object changed: %v", out)
	}
}

// Two controllers keeping the same condition type keep it once; types
// nobody keeps go.
func TestKeepPodConditionsUnion(t *testing.T) {
	keepReady := ReadsOnly(func(dst, src *corev1.Pod) { KeepPodConditions(dst, src, corev1.PodReady) })
	keepBoth := ReadsOnly(func(dst, src *corev1.Pod) {
		KeepPodConditions(dst, src, corev1.PodReady, corev1.PodResizePending)
	})
	transform := CacheTransform(reader{reads: []CacheRead{keepReady}}, reader{reads: []CacheRead{keepBoth}})
	pod := fullPod()
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"},
		{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred},
		{Type: corev1.ContainersReady, Status: corev1.ConditionFalse},
	}
	out, err := transform(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.PodCondition{pod.Status.Conditions[1], pod.Status.Conditions[2]}
	if got := out.(*corev1.Pod).Status.Conditions; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("conditions kept: %+v, want %+v", got, want)
	}
}

// Where every reader of a type declares the annotations it reads, the
// cache keeps the union of them (each reader asked with the object as it
// came); one reader that declared none keeps them all.
func TestCacheTransformKeepsAnnotationsRead(t *testing.T) {
	queueKey := ReadsAnnotations(readsNodeName(), func(_ *corev1.Pod, k string) bool { return k == "volcano.sh/queue-name" })
	// Reads "mine" only of the pods scheduled to node-1.
	mine := ReadsAnnotations(readsPhase(), func(p *corev1.Pod, k string) bool { return k == "mine" && p.Spec.NodeName == "node-1" })
	pod := func(node string) *corev1.Pod {
		p := fullPod()
		p.Spec.NodeName = node
		p.Annotations["mine"] = "m"
		p.Annotations["example.com/blob"] = "64 KiB nobody reads"
		return p
	}
	for _, tc := range []struct {
		name    string
		readers []Controller
		node    string
		want    map[string]string
	}{
		{"union", []Controller{reader{reads: []CacheRead{queueKey}}, reader{reads: []CacheRead{mine}}}, "node-1",
			map[string]string{"volcano.sh/queue-name": "q", "mine": "m"}},
		{"per object", []Controller{reader{reads: []CacheRead{queueKey}}, reader{reads: []CacheRead{mine}}}, "node-2",
			map[string]string{"volcano.sh/queue-name": "q"}},
		{"none read", []Controller{reader{reads: []CacheRead{ReadsAnnotations(readsPhase(), func(*corev1.Pod, string) bool { return false })}}}, "node-1",
			nil},
		{"one reader undeclared", []Controller{reader{reads: []CacheRead{queueKey}}, reader{reads: []CacheRead{readsPhase()}}}, "node-1",
			map[string]string{"volcano.sh/queue-name": "q", "mine": "m", "example.com/blob": "64 KiB nobody reads"}},
	} {
		transform := CacheTransform(tc.readers...)
		out, err := transform(pod(tc.node))
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Pod)
		if !equality.Semantic.DeepEqual(got.Annotations, tc.want) {
			t.Errorf("%s: annotations %v, want %v", tc.name, got.Annotations, tc.want)
		}
		again, _ := transform(got.DeepCopy())
		if !equality.Semantic.DeepEqual(again, got) {
			t.Errorf("%s: not idempotent:\n%+v\n%+v", tc.name, again, got)
		}
	}
}
