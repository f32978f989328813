package compat

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	applyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
)

// removeAfter deletes an object the test created when the test ends, so
// that a later run of the test in this process (go test -count=N) can
// create it again: the tests share one control plane, and nothing here
// has finalizers, so it is gone when del returns.
func removeAfter(t *testing.T, what string, del func(context.Context) error) {
	t.Helper()
	t.Cleanup(func() {
		if err := del(context.Background()); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: delete %s: %v", what, err)
		}
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestClientsetCRUDAndWatch creates, reads, lists and watches each kind
// through the generated clientset.
func TestClientsetCRUDAndWatch(t *testing.T) {
	ctx := ctxT(t)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())

	w, err := vc.SchedulingV1beta1().Queues().Watch(ctx, metav1.ListOptions{LabelSelector: "test=crud"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	q := &schedv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "crud-q", Labels: map[string]string{"test": "crud"}},
		Spec: schedv1beta1.QueueSpec{Weight: 4, Parent: "root", Capability: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("2"),
		}},
	}
	created, err := vc.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The test deletes it itself, unless it fails before.
	removeAfter(t, "queue crud-q", func(ctx context.Context) error {
		return vc.SchedulingV1beta1().Queues().Delete(ctx, "crud-q", metav1.DeleteOptions{})
	})
	// The CRD's defaulting applies: dequeueStrategy is traverse unless set.
	if created.Spec.DequeueStrategy != schedv1beta1.DequeueStrategyTraverse {
		t.Errorf("dequeueStrategy defaulted to %q, want traverse", created.Spec.DequeueStrategy)
	}
	got, err := vc.SchedulingV1beta1().Queues().Get(ctx, "crud-q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Weight != 4 || got.Spec.Capability.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 2 {
		t.Errorf("read back spec %+v", got.Spec)
	}
	expectEvent(t, w, watch.Added, "crud-q")

	ns := "default"
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "crud-pg", Namespace: ns},
		Spec:       schedv1beta1.PodGroupSpec{MinMember: 2, Queue: "crud-q"},
		Status:     schedv1beta1.PodGroupStatus{Phase: schedv1beta1.PodGroupPending},
	}
	if _, err := vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "podgroup crud-pg", func(ctx context.Context) error {
		return vc.SchedulingV1beta1().PodGroups(ns).Delete(ctx, "crud-pg", metav1.DeleteOptions{})
	})
	pgs, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !containsPG(pgs.Items, "crud-pg") {
		t.Errorf("podgroup list %v lacks crud-pg", pgs.Items)
	}

	cmd := &busv1alpha1.Command{
		ObjectMeta:   metav1.ObjectMeta{GenerateName: "crud-q-closequeue-", Namespace: ns},
		Action:       busv1alpha1.CloseQueueAction,
		TargetObject: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: "crud-q", UID: created.UID},
	}
	c, err := vc.BusV1alpha1().Commands(ns).Create(ctx, cmd, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "Command "+c.Name, func(ctx context.Context) error {
		return vc.BusV1alpha1().Commands(ns).Delete(ctx, c.Name, metav1.DeleteOptions{})
	})
	if c.Name == "" || c.TargetObject == nil || c.TargetObject.UID != created.UID {
		t.Errorf("command read back as %+v", c)
	}

	if err := vc.SchedulingV1beta1().Queues().Delete(ctx, "crud-q", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, watch.Deleted, "crud-q")
	if _, err := vc.SchedulingV1beta1().Queues().Get(ctx, "crud-q", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
}

func containsPG(items []schedv1beta1.PodGroup, name string) bool {
	for _, i := range items {
		if i.Name == name {
			return true
		}
	}
	return false
}

func expectEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed before %s %s", typ, name)
			}
			if q, isQ := ev.Object.(*schedv1beta1.Queue); isQ && ev.Type == typ && q.Name == name {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event for %s", typ, name)
		}
	}
}

// TestInformersAndListers runs the generated informer factory and reads
// through its listers, as the controllers do.
func TestInformersAndListers(t *testing.T) {
	ctx := ctxT(t)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	factory := externalversions.NewSharedInformerFactory(vc, 0)
	queues := factory.Scheduling().V1beta1().Queues()
	podgroups := factory.Scheduling().V1beta1().PodGroups()
	commands := factory.Bus().V1alpha1().Commands()
	// Touch the informers so the factory starts them.
	_, _, _ = queues.Informer(), podgroups.Informer(), commands.Informer()
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("cache of %v did not sync", typ)
		}
	}

	if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &schedv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "informer-q"}, Spec: schedv1beta1.QueueSpec{Weight: 1},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "queue informer-q", func(ctx context.Context) error {
		return vc.SchedulingV1beta1().Queues().Delete(ctx, "informer-q", metav1.DeleteOptions{})
	})
	if _, err := vc.SchedulingV1beta1().PodGroups("default").Create(ctx, &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "informer-pg", Namespace: "default"}, Spec: schedv1beta1.PodGroupSpec{Queue: "informer-q"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "podgroup informer-pg", func(ctx context.Context) error {
		return vc.SchedulingV1beta1().PodGroups("default").Delete(ctx, "informer-pg", metav1.DeleteOptions{})
	})
	if _, err := vc.BusV1alpha1().Commands("default").Create(ctx, &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{Name: "informer-cmd", Namespace: "default"}, Action: busv1alpha1.OpenQueueAction,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "Command informer-cmd", func(ctx context.Context) error {
		return vc.BusV1alpha1().Commands("default").Delete(ctx, "informer-cmd", metav1.DeleteOptions{})
	})
	err := waitFor(ctx, func() bool {
		_, e1 := queues.Lister().Get("informer-q")
		pg, e2 := podgroups.Lister().PodGroups("default").Get("informer-pg")
		_, e3 := commands.Lister().Commands("default").Get("informer-cmd")
		// The CRD defaults an empty queue name to "default"; here it is set.
		return e1 == nil && e2 == nil && e3 == nil && pg.Spec.Queue == "informer-q"
	})
	if err != nil {
		t.Fatalf("listers never saw the objects: %v", err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), queues.Informer().HasSynced) {
		t.Fatal("not synced")
	}
}

func waitFor(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// TestQueueStatusServerSideApply writes queue status the way the queue
// controller does: server-side apply on the status subresource, field
// manager queue-controller. A repeated identical apply must not write.
func TestQueueStatusServerSideApply(t *testing.T) {
	ctx := ctxT(t)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &schedv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "ssa-q"}, Spec: schedv1beta1.QueueSpec{Weight: 2},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "queue ssa-q", func(ctx context.Context) error {
		return vc.SchedulingV1beta1().Queues().Delete(ctx, "ssa-q", metav1.DeleteOptions{})
	})
	apply := applyv1beta1.Queue("ssa-q").WithStatus(applyv1beta1.QueueStatus().
		WithState(schedv1beta1.QueueStateClosing).WithRunning(2).WithPending(1).WithInqueue(0))
	opts := metav1.ApplyOptions{FieldManager: keys.QueueControllerManager, Force: true}
	first, err := vc.SchedulingV1beta1().Queues().ApplyStatus(ctx, apply, opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.Status.State != schedv1beta1.QueueStateClosing || first.Status.Running != 2 || first.Status.Pending != 1 {
		t.Errorf("status after apply: %+v", first.Status)
	}
	if first.Spec.Weight != 2 {
		t.Errorf("status apply changed spec weight to %d", first.Spec.Weight)
	}
	var owner *metav1.ManagedFieldsEntry
	for i, mf := range first.ManagedFields {
		if mf.Manager == keys.QueueControllerManager {
			owner = &first.ManagedFields[i]
		}
	}
	if owner == nil || owner.Operation != metav1.ManagedFieldsOperationApply || owner.Subresource != "status" {
		b, _ := json.Marshal(first.ManagedFields)
		t.Fatalf("no status apply entry for %s in managedFields: %s", keys.QueueControllerManager, b)
	}

	second, err := vc.SchedulingV1beta1().Queues().ApplyStatus(ctx, apply, opts)
	if err != nil {
		t.Fatal(err)
	}
	if second.ResourceVersion != first.ResourceVersion {
		t.Errorf("identical apply wrote again: resourceVersion %s -> %s", first.ResourceVersion, second.ResourceVersion)
	}

	// A spec apply through the main resource cannot touch status.
	_, err = vc.SchedulingV1beta1().Queues().Apply(ctx,
		applyv1beta1.Queue("ssa-q").WithStatus(applyv1beta1.QueueStatus().WithState(schedv1beta1.QueueStateOpen)),
		metav1.ApplyOptions{FieldManager: "someone-else", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	after, err := vc.SchedulingV1beta1().Queues().Get(ctx, "ssa-q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Status.State != schedv1beta1.QueueStateClosing {
		t.Errorf("status changed through the main resource: %q", after.Status.State)
	}

	// The CRD rejects what upstream rejects: an unknown state.
	_, err = vc.SchedulingV1beta1().Queues().ApplyStatus(ctx,
		applyv1beta1.Queue("ssa-q").WithStatus(applyv1beta1.QueueStatus().WithState("Sleeping")), opts)
	if !apierrors.IsInvalid(err) {
		t.Errorf("state Sleeping: got %v, want Invalid", err)
	}
}

// TestPodGroupHasNoStatusSubresource matches upstream: PodGroup status is
// stored with the object and /status does not exist.
func TestPodGroupHasNoStatusSubresource(t *testing.T) {
	ctx := ctxT(t)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "nostatus-pg", Namespace: "default"},
		Spec:       schedv1beta1.PodGroupSpec{MinMember: 1},
		Status:     schedv1beta1.PodGroupStatus{Phase: schedv1beta1.PodGroupInqueue},
	}
	created, err := vc.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	removeAfter(t, "podgroup nostatus-pg", func(ctx context.Context) error {
		return vc.SchedulingV1beta1().PodGroups("default").Delete(ctx, "nostatus-pg", metav1.DeleteOptions{})
	})
	if created.Status.Phase != schedv1beta1.PodGroupInqueue {
		t.Errorf("status not stored on create: %+v", created.Status)
	}
	if created.Spec.Queue != keys.DefaultQueue {
		t.Errorf("queue defaulted to %q, want %q", created.Spec.Queue, keys.DefaultQueue)
	}
	err = vc.SchedulingV1beta1().RESTClient().Get().Namespace("default").Resource("podgroups").
		Name("nostatus-pg").SubResource("status").Do(ctx).Error()
	if !apierrors.IsNotFound(err) {
		t.Errorf("GET podgroups/status: %v, want NotFound", err)
	}
	created.Status.Phase = schedv1beta1.PodGroupRunning
	updated, err := vc.SchedulingV1beta1().PodGroups("default").Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Status.Phase != schedv1beta1.PodGroupRunning {
		t.Errorf("status not written with the object: %+v", updated.Status)
	}
}
