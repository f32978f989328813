package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

var queuesGVR = schedulingv1beta1.SchemeGroupVersion.WithResource("queues")

func TestQueueParentNotSelf(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()

	_, err := qs.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "selfish"}, Spec: schedulingv1beta1.QueueSpec{Parent: "selfish"}}, metav1.CreateOptions{})
	mustDeny(t, err, "queue selfish cannot be its own parent: set spec.parent to another queue")

	_, err = qs.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "selfish"}, Spec: schedulingv1beta1.QueueSpec{Parent: "root"}}, metav1.CreateOptions{})
	mustAdmit(t, err)

	// The rule holds for updates too.
	err = updateQueue(ctx, vc(t), "selfish", metav1.UpdateOptions{}, func(q *schedulingv1beta1.Queue) { q.Spec.Parent = "selfish" })
	mustDeny(t, err, "queue selfish cannot be its own parent")
}

// TestQueueWithoutSpec: a queue written with no spec at all (a bare
// manifest) would have no weight, since the CRD defaults spec.weight only
// inside a spec: it is refused with one clear line, not with a CEL error
// about a missing key, and nothing is written.
func TestQueueWithoutSpec(t *testing.T) {
	setup(t)
	ctx := context.Background()
	bare := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": schedulingv1beta1.SchemeGroupVersion.String(), "kind": "Queue",
		"metadata": map[string]any{"name": "bare"},
	}}
	_, err := dyn(t).Resource(queuesGVR).Create(ctx, bare, metav1.CreateOptions{})
	mustDeny(t, err, "queue bare has no spec: set spec.weight to 1 or more")
	if _, err := vc(t).SchedulingV1beta1().Queues().Get(ctx, "bare", metav1.GetOptions{}); err == nil {
		t.Error("the queue without a spec was written")
	}
	// With a spec, even an empty one, the CRD defaults the weight.
	bare.Object["spec"] = map[string]any{}
	_, err = dyn(t).Resource(queuesGVR).Create(ctx, bare, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustAdmit(t, err)
}

func TestQueueDeservedAtLeastGuarantee(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()
	rl := func(cpu, mem string) corev1.ResourceList {
		l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		if mem != "" {
			l[corev1.ResourceMemory] = resource.MustParse(mem)
		}
		return l
	}
	bad := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "greedy"}, Spec: schedulingv1beta1.QueueSpec{
		Deserved:  rl("1", "1Gi"),
		Guarantee: schedulingv1beta1.Guarantee{Resource: rl("1500m", "512Mi")},
	}}
	_, err := qs.Create(ctx, bad, metav1.CreateOptions{})
	mustDeny(t, err, "queue greedy: deserved is below guarantee for cpu: raise spec.deserved or lower spec.guarantee.resource")

	// Equal amounts in different units, and a resource only one side names, are fine.
	good := bad.DeepCopy()
	good.Spec.Deserved = rl("1500m", "")
	good.Spec.Guarantee.Resource = rl("1.5", "512Mi")
	q, err := qs.Create(ctx, good, metav1.CreateOptions{})
	mustAdmit(t, err)

	err = updateQueue(ctx, vc(t), q.Name, metav1.UpdateOptions{}, func(q *schedulingv1beta1.Queue) { q.Spec.Guarantee.Resource = rl("2", "") })
	mustDeny(t, err, "deserved is below guarantee for cpu")

	// Quantities sent as JSON integers (int-or-string) are compared too.
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
		"metadata": map[string]any{"name": "int-quantities"},
		"spec": map[string]any{
			"deserved":  map[string]any{"cpu": int64(2), "nvidia.com/gpu": int64(1)},
			"guarantee": map[string]any{"resource": map[string]any{"cpu": int64(4), "nvidia.com/gpu": int64(1)}},
		},
	}}
	_, err = dyn(t).Resource(queuesGVR).Create(ctx, u, metav1.CreateOptions{})
	mustDeny(t, err, "deserved is below guarantee for cpu:")
	_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "deserved", "cpu")
	_, err = dyn(t).Resource(queuesGVR).Create(ctx, u, metav1.CreateOptions{})
	mustAdmit(t, err)
}
