package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
)

// TestJobOnlyInLeafQueue: as Volcano's job webhook, vc-workload-open-queue
// admits a Volcano Job only into a leaf queue: a queue with a child queue
// and root are refused, each with its own message; a leaf is admitted, and
// so is a PodGroup in the parent (Volcano's podgroup webhook checks only the
// state).
func TestJobOnlyInLeafQueue(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	for _, q := range []*schedulingv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "leaf-parent"}, Spec: schedulingv1beta1.QueueSpec{Parent: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "leaf-child"}, Spec: schedulingv1beta1.QueueSpec{Parent: "leaf-parent"}},
	} {
		if err := createQueueWithState(ctx, c, q, schedulingv1beta1.QueueStateOpen); err != nil {
			t.Fatal(err)
		}
	}
	jobs := dyn(t).Resource(schema.GroupVersionResource{Group: "batch.volcano.sh", Version: "v1alpha1", Resource: "jobs"}).Namespace("default")
	job := func(name, queue string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"queue": queue, "minAvailable": int64(1)},
		}}
	}
	err := eventually(t, true, func() error {
		_, err := jobs.Create(ctx, job("job-in-parent", "leaf-parent"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDeny(t, err, "queue leaf-parent has child queue leaf-child: a job can only be submitted to a leaf queue")

	_, err = jobs.Create(ctx, job("job-in-root", "root"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustDeny(t, err, "a job cannot be submitted to the root queue: pick a leaf queue")

	_, err = jobs.Create(ctx, job("job-in-leaf", "leaf-child"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustAdmit(t, err)

	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pg-in-parent"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "leaf-parent"}}
	_, err = c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustAdmit(t, err)

	// Moving the child away makes the parent a leaf again.
	// (A patch: serve's queue index controller labels a queue a moment after
	// it is made, so an update from an earlier read may meet a conflict.)
	if _, err := c.SchedulingV1beta1().Queues().Patch(ctx, "leaf-child", types.MergePatchType, []byte(`{"spec":{"parent":"root"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = eventually(t, false, func() error {
		_, err := jobs.Create(ctx, job("job-in-former-parent", "leaf-parent"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustAdmit(t, err)
}

// TestRootResourcesFixed: as Volcano's queue webhook (its
// --enable-root-queue-protection, on by default), an update may not change
// root's capability, deserved or guarantee; its weight may change, and an
// update that leaves them as they are is admitted.
func TestRootResourcesFixed(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "root"}}, ""); err != nil {
		t.Fatal(err)
	}
	const want = "the root queue's capability, deserved and guarantee cannot be changed"
	// Each change adds memory, which no list of root names (another test
	// may have created root with cpu in all three), so that the resource
	// rules of vc-queue-spec have nothing to refuse and this rule is the
	// only one that can.
	withMemory := func(l corev1.ResourceList) corev1.ResourceList {
		out := l.DeepCopy()
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[corev1.ResourceMemory] = resource.MustParse("1Gi")
		return out
	}
	for field, change := range map[string]func(*schedulingv1beta1.Queue){
		"capability": func(q *schedulingv1beta1.Queue) { q.Spec.Capability = withMemory(q.Spec.Capability) },
		"deserved":   func(q *schedulingv1beta1.Queue) { q.Spec.Deserved = withMemory(q.Spec.Deserved) },
		"guarantee":  func(q *schedulingv1beta1.Queue) { q.Spec.Guarantee.Resource = withMemory(q.Spec.Guarantee.Resource) },
	} {
		err := updateQueue(ctx, c, "root", metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}, change)
		if err == nil {
			t.Errorf("root %s change admitted", field)
			continue
		}
		mustDeny(t, err, want)
	}
	err := updateQueue(ctx, c, "root", metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}, func(q *schedulingv1beta1.Queue) { q.Spec.Weight++ })
	mustAdmit(t, err)
}

// withoutRootPolicy runs update (a change of root's resources) with the
// binding of vc-queue-root deleted, retrying until the API server no longer
// enforces it, then installs the policies again and waits until it does.
func withoutRootPolicy(t *testing.T, update func() error) {
	t.Helper()
	ctx := context.Background()
	bindings := kube(t).AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	if err := bindings.Delete(ctx, "vc-queue-root", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustAdmit(t, eventually(t, false, update))
	if _, err := runInstall(t, &install.Options{}); err != nil {
		t.Fatal(err)
	}
	c := vc(t)
	mustDeny(t, eventually(t, true, func() error {
		return updateQueue(ctx, c, "root", metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}, func(q *schedulingv1beta1.Queue) {
			q.Spec.Capability = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		})
	}), "the root queue's capability, deserved and guarantee cannot be changed")
}
