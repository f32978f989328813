package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// resources parses "cpu=4,memory=8Gi" ("" is no list).
func resources(s string) corev1.ResourceList {
	if s == "" {
		return nil
	}
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

func resourceQueue(name, parent, capability, deserved, guarantee string) *schedulingv1beta1.Queue {
	return &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{
		Weight: 1, Parent: parent, Capability: resources(capability), Deserved: resources(deserved),
		Guarantee: schedulingv1beta1.Guarantee{Resource: resources(guarantee)},
	}}
}

// TestQueueCapabilityAtLeastDeserved: per resource, capability >= deserved
// and capability >= guarantee on one queue (deserved >= guarantee is
// TestQueueDeservedAtLeastGuarantee); a list that does not name a resource
// does not bound it.
func TestQueueCapabilityAtLeastDeserved(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()

	_, err := qs.Create(ctx, resourceQueue("capped", "", "cpu=4,memory=8Gi", "cpu=2,memory=16Gi", ""), metav1.CreateOptions{})
	mustDeny(t, err, "queue capped: capability is below deserved for memory: raise spec.capability or lower spec.deserved")
	_, err = qs.Create(ctx, resourceQueue("capped", "", "cpu=1", "", "cpu=2"), metav1.CreateOptions{})
	mustDeny(t, err, "queue capped: capability is below guarantee for cpu: raise spec.capability or lower spec.guarantee.resource")

	_, err = qs.Create(ctx, resourceQueue("capped", "", "cpu=4000m,memory=8Gi", "cpu=4,nvidia.com/gpu=8", "cpu=4"), metav1.CreateOptions{})
	mustAdmit(t, err)
	err = updateQueue(ctx, vc(t), "capped", metav1.UpdateOptions{}, func(q *schedulingv1beta1.Queue) { q.Spec.Deserved = resources("cpu=5") })
	mustDeny(t, err, "capability is below deserved for cpu")
}

// TestQueueResourceRulesRatchet: a queue that broke a resource rule before
// the policies were installed can still be edited as long as its resources
// are left alone, e.g. by the queue controller's annotation patches; a
// change of its resources must satisfy the rules.
func TestQueueResourceRulesRatchet(t *testing.T) {
	setup(t)
	ctx := context.Background()
	k := kube(t)
	qs := vc(t).SchedulingV1beta1().Queues()

	binding, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-queue-spec", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		b := binding.DeepCopy()
		b.ResourceVersion, b.UID, b.ManagedFields = "", "", nil
		if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// Enforced again once a bad queue is refused.
		bad := resourceQueue("ratchet-probe", "", "cpu=1", "cpu=2", "")
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := qs.Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err != nil, nil
		}); err != nil {
			t.Fatalf("vc-queue-spec not enforced again: %v", err)
		}
	}
	// The binding is gone once a bad queue is admitted.
	legacy := resourceQueue("legacy-bad", "", "cpu=1", "cpu=2", "cpu=3")
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := qs.Create(ctx, legacy, metav1.CreateOptions{})
		return err == nil, nil
	}); err != nil {
		restore()
		t.Fatalf("could not create a queue that breaks the rules without the binding: %v", err)
	}
	restore()

	patch := []byte(`{"metadata":{"annotations":{"volcano.sh/closed-by-parent":"true"}},"spec":{"weight":3}}`)
	_, err = qs.Patch(ctx, "legacy-bad", types.MergePatchType, patch, metav1.PatchOptions{})
	mustAdmit(t, err)
	_, err = qs.Patch(ctx, "legacy-bad", types.MergePatchType, []byte(`{"spec":{"capability":{"cpu":"2"}}}`), metav1.PatchOptions{})
	mustDeny(t, err, "queue legacy-bad: deserved is below guarantee for cpu")
}

// TestQueueParentCycle: a parent whose own parent is the queue (a cycle of
// two) is refused, on update and on create. A cycle through more queues,
// and a parent that does not exist, are beyond what one evaluation per
// queue can see; the CLI and the controller handle those
// (TestQueueHierarchyCycles in test/queue, TestQueueCreateUpdateHierarchy
// in test/cli).
func TestQueueParentCycle(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()

	a, err := qs.Create(ctx, resourceQueue("cyc-a", "root", "", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	_, err = qs.Create(ctx, resourceQueue("cyc-b", "cyc-a", "", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	_ = a
	// Patches: serve's queue index controller labels a queue a moment after
	// it is made, so an update from an earlier read may meet a conflict.
	toB := []byte(`{"spec":{"parent":"cyc-b"}}`)
	err = eventually(t, true, func() error {
		_, err := qs.Patch(ctx, "cyc-a", types.MergePatchType, toB, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDeny(t, err, "queue cyc-a cannot have parent cyc-b: the parent of cyc-b is cyc-a, which would make a cycle")
	_, err = qs.Patch(ctx, "cyc-a", types.MergePatchType, toB, metav1.PatchOptions{})
	mustDeny(t, err, "would make a cycle")

	// A queue waiting for a parent that does not exist yet cannot become
	// that parent's parent.
	_, err = qs.Create(ctx, resourceQueue("cyc-later", "cyc-first", "", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	err = eventually(t, true, func() error {
		_, err := qs.Create(ctx, resourceQueue("cyc-first", "cyc-later", "", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDeny(t, err, "queue cyc-first cannot have parent cyc-later: the parent of cyc-later is cyc-first")
	_, err = qs.Create(ctx, resourceQueue("cyc-first", "root", "", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)

	// Edits that leave the parent alone are not held up by a cycle.
	_, err = qs.Patch(ctx, "cyc-b", types.MergePatchType, []byte(`{"spec":{"weight":2}}`), metav1.PatchOptions{})
	mustAdmit(t, err)
}

// TestQueueWithinParent: a child's capability, deserved and guarantee are
// at most its parent's (per resource the parent sets), and a parent may not
// be lowered below a child's. The root queue bounds nothing, as in Volcano.
func TestQueueWithinParent(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()

	_, err := qs.Create(ctx, resourceQueue("wp-parent", "root", "cpu=8,memory=16Gi", "cpu=6", "cpu=4"), metav1.CreateOptions{})
	mustAdmit(t, err)
	for _, tc := range []struct{ capability, deserved, guarantee, want string }{
		{"cpu=9", "", "", "queue wp-child exceeds its parent wp-parent in capability cpu"},
		{"memory=32Gi", "", "", "in capability memory"},
		{"", "cpu=7", "", "in deserved cpu"},
		{"", "cpu=5", "cpu=5", "in guarantee cpu"},
	} {
		err := eventually(t, true, func() error {
			_, err := qs.Create(ctx, resourceQueue("wp-child", "wp-parent", tc.capability, tc.deserved, tc.guarantee), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		mustDeny(t, err, tc.want)
	}
	// Within every bound, and in resources the parent does not set.
	_, err = qs.Create(ctx, resourceQueue("wp-child", "wp-parent", "cpu=8,nvidia.com/gpu=4", "cpu=6", "cpu=4,nvidia.com/gpu=1"), metav1.CreateOptions{})
	mustAdmit(t, err)

	// The parent cannot be lowered below its child.
	err = eventually(t, true, func() error {
		// Read again each time: serve's queue index controller labels a
		// queue a moment after it is made or changed.
		p := mustGetQueue(t, "wp-parent")
		p.Spec.Capability = resources("cpu=4,memory=16Gi")
		p.Spec.Deserved = resources("cpu=4")
		p.Spec.Guarantee.Resource = resources("cpu=4")
		_, err := qs.Update(ctx, p, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsConflict(err) {
			return nil
		}
		return err
	})
	mustDeny(t, err, "queue wp-parent is below its child wp-child in capability cpu, deserved cpu")

	// Moving a queue under a parent it exceeds is refused too.
	_, err = qs.Create(ctx, resourceQueue("wp-big", "root", "cpu=100", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	_, err = qs.Patch(ctx, "wp-big", types.MergePatchType, []byte(`{"spec":{"parent":"wp-parent"}}`), metav1.PatchOptions{})
	mustDeny(t, err, "queue wp-big exceeds its parent wp-parent in capability cpu")

	// Root bounds nothing: Volcano's scheduler sizes it from the cluster.
	// Its resources can be set only when it is created (vc-queue-root
	// refuses changing them, as Volcano does); a root that already exists
	// gets them with that policy lifted for the one update.
	root := resourceQueue("root", "", "cpu=1", "cpu=1", "cpu=1")
	if _, err := qs.Create(ctx, root, metav1.CreateOptions{}); err != nil {
		withoutRootPolicy(t, func() error {
			r := mustGetQueue(t, "root")
			r.Spec.Capability, r.Spec.Deserved, r.Spec.Guarantee = root.Spec.Capability, root.Spec.Deserved, root.Spec.Guarantee
			_, err := qs.Update(ctx, r, metav1.UpdateOptions{})
			return err
		})
	}
	_, err = qs.Create(ctx, resourceQueue("wp-under-root", "root", "cpu=64", "cpu=32", "cpu=16"), metav1.CreateOptions{})
	mustAdmit(t, err)
}
