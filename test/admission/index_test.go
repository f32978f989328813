package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// The admission queue index (docs/admission.md, index mode): the policies
// read QueueIndexes that serve's queueindex controller (running in-process
// for the package, see indexer) keeps and stamps refreshed.

// waitIndexCurrent waits until every index holds what the queues there are
// make of it, as serve computes it.
func waitIndexCurrent(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	var diff string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := vc(t).SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ptrs := make([]*schedulingv1beta1.Queue, len(list.Items))
		for i := range list.Items {
			ptrs[i] = &list.Items[i]
		}
		want := rules.QueueIndexEntriesText(ptrs)
		for _, name := range admissionv1alpha1.QueueIndexNames {
			idx, err := vc(t).AdmissionV1alpha1().QueueIndexes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				diff = err.Error()
				return false, nil
			}
			if idx.Spec.Entries != want[name] {
				diff = fmt.Sprintf("index %s holds %q, want %q", name, idx.Spec.Entries, want[name])
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the queue index controller did not catch up with the queues: %s", diff)
	}
}

func index(t *testing.T, name string) *admissionv1alpha1.QueueIndex {
	t.Helper()
	idx, err := vc(t).AdmissionV1alpha1().QueueIndexes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// entries reads the entries of an index back from their lines.
func entries(t *testing.T, name string) map[string]admissionv1alpha1.QueueIndexEntry {
	t.Helper()
	out := map[string]admissionv1alpha1.QueueIndexEntry{}
	lines, err := rules.ParseQueueIndexText(index(t, name).Spec.Entries)
	if err != nil {
		t.Fatalf("index %s: %v", name, err)
	}
	for q, line := range lines {
		e, err := rules.ParseQueueIndexLine(name, line)
		if err != nil {
			t.Fatalf("index %s, queue %s: %v", name, q, err)
		}
		out[q] = e
	}
	return out
}

// mustDenyBy asserts a denial with want by the named binding.
func mustDenyBy(t *testing.T, err error, binding, want string) {
	t.Helper()
	mustDeny(t, err, want)
	if !strings.Contains(err.Error(), "with binding '"+binding+"'") {
		t.Fatalf("denied, but not by binding %s: %v", binding, err)
	}
}

// mustDenyByWebhook asserts a denial with want by serve's queue webhook.
func mustDenyByWebhook(t *testing.T, err error, want string) {
	t.Helper()
	mustDeny(t, err, want)
	if !strings.Contains(err.Error(), `admission webhook "`+keys.QueueWebhookName+`" denied the request`) {
		t.Fatalf("denied, but not by the webhook %s: %v", keys.QueueWebhookName, err)
	}
}

// TestIndexHoldsStateAndChildren: the controller records the queues that
// are not Open and the parents' child counts, and the rules refuse through
// the index: a PodGroup in a Closed queue, a Job
// in a queue with children, the deletion of a Closed queue with children.
func TestIndexHoldsStateAndChildren(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	for _, q := range []*schedulingv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "ix-parent"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ix-child-a"}, Spec: schedulingv1beta1.QueueSpec{Parent: "ix-parent"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ix-child-b"}, Spec: schedulingv1beta1.QueueSpec{Parent: "ix-parent"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "ix-closed"}},
	} {
		if err := createQueueWithState(ctx, c, q, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := setState(ctx, c, "ix-closed", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	if err := setState(ctx, c, "ix-parent", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	waitIndexCurrent(t)
	states, jobs := entries(t, "states"), entries(t, "jobs")
	if e := jobs["ix-parent"]; e.Children != 2 || e.Child != "ix-child-a" || e.State != "Closed" || states["ix-parent"].State != "Closed" {
		t.Fatalf("ix-parent: jobs entry %+v, state %q; want 2 children, ix-child-a first, and Closed", e, states["ix-parent"].State)
	}
	if e := states["ix-closed"]; e.State != "Closed" {
		t.Fatalf("states entry of ix-closed = %+v, want Closed", e)
	}
	if _, ok := states["ix-child-a"]; ok {
		t.Fatalf("the Open ix-child-a has a states entry: %+v", states["ix-child-a"])
	}
	if _, ok := jobs["ix-child-a"]; ok {
		t.Fatalf("the Open leaf ix-child-a has a jobs entry: %+v", jobs["ix-child-a"])
	}
	// Each evaluation pays for the whole index: serve keeps it without
	// managedFields, which would list every entry a second time.
	if mf := index(t, "jobs").ManagedFields; len(mf) != 0 {
		t.Fatalf("the jobs index carries managedFields: %+v", mf)
	}

	// The API server's param informer sees the index a moment after serve
	// wrote it.
	err := eventually(t, true, func() error {
		_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "ix-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "ix-closed"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDenyBy(t, err, "vc-workload-open-queue", "queue ix-closed is Closed and accepts no new work")

	if err := setState(ctx, c, "ix-parent", schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	err = eventually(t, true, func() error {
		_, err := c.BatchV1alpha1().Jobs("default").Create(ctx, &batchv1alpha1.Job{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "ix-"}, Spec: batchv1alpha1.JobSpec{Queue: "ix-parent"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "accepts no new work") {
			return nil // the index still says Closed: wait for Open
		}
		return err
	})
	mustDenyBy(t, err, "vc-workload-open-queue-jobs", "queue ix-parent has child queue ix-child-a (and 1 more): a job can only be submitted to a leaf queue")

	if err := setState(ctx, c, "ix-parent", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	// The deletion is refused by the policy reading the children index,
	// not by serve's webhook, which deletes no longer call.
	err = eventually(t, true, func() error {
		return c.SchedulingV1beta1().Queues().Delete(ctx, "ix-parent", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	})
	mustDenyBy(t, err, "vc-queue-delete", "queue ix-parent has child queue ix-child-a (and 1 more): delete it or move it to another parent first")
	if e := entries(t, admissionv1alpha1.QueueIndexChildren); e["ix-parent"].Children != 2 || e["ix-parent"].Child != "ix-child-a" || len(e["ix-closed"].State+e["ix-parent"].State) != 0 {
		t.Fatalf("the children index holds %+v, want ix-parent's 2 children (first ix-child-a) and no states", e)
	}
	// Once the children are gone the index says so and the deletion goes
	// through.
	for _, name := range []string{"ix-child-a", "ix-child-b"} {
		if err := setState(ctx, c, name, schedulingv1beta1.QueueStateClosed); err != nil {
			t.Fatal(err)
		}
		if err := c.SchedulingV1beta1().Queues().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = eventually(t, false, func() error {
		return c.SchedulingV1beta1().Queues().Delete(ctx, "ix-parent", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	})
	mustAdmit(t, err)
}

// TestWebhookHierarchyRules: serve's webhook refuses, from its cache, a
// queue above its parent, a parent lowered below its child and a cycle of
// two, the moment after the queues were written.
func TestWebhookHierarchyRules(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()
	_, err := qs.Create(ctx, resourceQueue("ih-parent", "root", "cpu=8", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	// A parent created a moment ago: the webhook reads it from the API
	// server when its cache does not hold it yet.
	_, err = qs.Create(ctx, resourceQueue("ih-over", "ih-parent", "cpu=9", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustDenyByWebhook(t, err, "queue ih-over exceeds its parent ih-parent in capability cpu")
	_, err = qs.Create(ctx, resourceQueue("ih-child", "ih-parent", "cpu=6", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	dry := metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}
	// The child reaches the webhook's cache through its watch.
	err = eventually(t, true, func() error {
		_, err := qs.Patch(ctx, "ih-parent", types.MergePatchType, []byte(`{"spec":{"capability":{"cpu":"4"}}}`), dry)
		return err
	})
	mustDenyByWebhook(t, err, "queue ih-parent is below its child ih-child in capability cpu")
	_, err = qs.Patch(ctx, "ih-parent", types.MergePatchType, []byte(`{"spec":{"parent":"ih-child"}}`), dry)
	mustDenyByWebhook(t, err, "queue ih-parent cannot have parent ih-child: the parent of ih-child is ih-parent, which would make a cycle")
	// What breaks no rule goes through: a raise, a new weight.
	_, err = qs.Patch(ctx, "ih-parent", types.MergePatchType, []byte(`{"spec":{"capability":{"cpu":"10"},"weight":4}}`), dry)
	mustAdmit(t, err)
}

// TestWebhookDown: with serve's webhook gone, queue creates that name a
// parent or set resources, and changes of a parent or resources, are
// refused (failurePolicy Fail: the rules never vanish silently) with a
// message naming the webhook; what the webhook never checks (a plain queue
// under root, a queue's weight, PodGroups, Jobs, queue deletes, which the
// children index answers) goes on.
func TestWebhookDown(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "wd-leaf"}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "wd-parent"}}, schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "wd-child"}, Spec: schedulingv1beta1.QueueSpec{Parent: "wd-parent"}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := webhook.stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := webhook.start(); err != nil {
			t.Error(err)
		}
		err := eventually(t, false, func() error {
			_, err := c.SchedulingV1beta1().Queues().Create(ctx, resourceQueue("wd-again", "", "cpu=1", "", ""),
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		if err != nil {
			t.Errorf("the webhook started again, and a queue create is still refused: %v", err)
		}
	})
	// The webhook is called for what can break a hierarchy rule, and its
	// match condition says so in CEL as rules.QueueWriteRelevant says it in
	// Go: each write below is refused for want of the webhook exactly when
	// both say it is relevant. What the API server does not send goes on.
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	for _, w := range []struct {
		name     string
		q        *schedulingv1beta1.Queue
		relevant bool
	}{
		{"a plain create under root", resourceQueue("wd-new", "", "", "", ""), false},
		{"a create naming root", resourceQueue("wd-new", "root", "", "", ""), false},
		{"a create naming another parent", resourceQueue("wd-new", "wd-leaf", "", "", ""), true},
		{"a create with a capability", resourceQueue("wd-new", "root", "cpu=1", "", ""), true},
		{"a create with a deserved", resourceQueue("wd-new", "", "", "cpu=1", ""), true},
		{"a create with a guarantee", resourceQueue("wd-new", "", "", "", "cpu=1"), true},
	} {
		if got := rules.QueueWriteRelevant(w.q, nil); got != w.relevant {
			t.Errorf("%s: rules.QueueWriteRelevant %v, want %v", w.name, got, w.relevant)
		}
		_, err := c.SchedulingV1beta1().Queues().Create(ctx, w.q, dry)
		switch {
		case w.relevant && (err == nil || !strings.Contains(err.Error(), `failed calling webhook "`+keys.QueueWebhookName+`"`)):
			t.Errorf("%s with the webhook down: %v, want refused for want of the webhook", w.name, err)
		case !w.relevant && err != nil:
			t.Errorf("%s with the webhook down: refused: %v", w.name, err)
		}
	}
	upd := metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}
	err := updateQueue(ctx, c, "wd-leaf", upd, func(q *schedulingv1beta1.Queue) { q.Spec.Parent = "default" })
	mustDeny(t, err, `failed calling webhook "`+keys.QueueWebhookName+`"`)
	err = updateQueue(ctx, c, "wd-leaf", upd, func(q *schedulingv1beta1.Queue) { q.Spec.Capability = resources("cpu=2") })
	mustDeny(t, err, `failed calling webhook "`+keys.QueueWebhookName+`"`)
	// Its match conditions leave out what it never checks: no call. The
	// queue controller writing root where spec.parent was empty is no move.
	err = updateQueue(ctx, c, "wd-leaf", upd, func(q *schedulingv1beta1.Queue) { q.Spec.Weight = 3 })
	mustAdmit(t, err)
	err = updateQueue(ctx, c, "wd-leaf", upd, func(q *schedulingv1beta1.Queue) { q.Spec.Parent = "root" })
	mustAdmit(t, err)
	_, err = c.SchedulingV1beta1().PodGroups("default").Create(ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "wd-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "wd-leaf"}}, dry)
	mustAdmit(t, err)
	// A closed leaf is deleted, and a closed parent is not, with the
	// webhook down: the children index answers deletes.
	if err := setState(ctx, c, "wd-leaf", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	err = c.SchedulingV1beta1().Queues().Delete(ctx, "wd-leaf", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	mustAdmit(t, err)
	err = eventually(t, true, func() error {
		return c.SchedulingV1beta1().Queues().Delete(ctx, "wd-parent", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	})
	mustDenyBy(t, err, "vc-queue-delete", "queue wd-parent has child queue wd-child: delete it or move it to another parent first")
}

// ageIndexes stops the index controller and stamps every index refreshed
// age ago, as an index looks once serve has been gone that long; the
// controller starts again when the test ends.
func ageIndexes(t *testing.T, age time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := indexer.stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := indexer.start(); err != nil {
			t.Error(err)
		}
		waitFresh(t)
	})
	then := metav1.NewTime(time.Now().Add(-age))
	for _, name := range admissionv1alpha1.QueueIndexNames {
		idx := index(t, name)
		idx.Spec.RefreshedAt = &then
		if _, err := vc(t).AdmissionV1alpha1().QueueIndexes().Update(ctx, idx, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFresh waits until a PodGroup create is admitted again (the API server
// sees a refreshed index).
func waitFresh(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{GenerateName: "fresh-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1}}
	err := eventually(t, false, func() error {
		_, err := vc(t).SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	if err != nil {
		t.Errorf("the index controller started again, and a PodGroup create is still refused: %v", err)
	}
}

// TestStaleIndexRefusesCreates: an index serve stopped refreshing more than
// a minute ago is not trusted: PodGroup and Job creates are refused with a
// message that says why, by each policy that reads an index; what reads no
// index (queue writes, which serve's webhook checks from its cache, and
// updates) goes on. Serve, started again, refreshes the index and creates
// are admitted.
func TestStaleIndexRefusesCreates(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "st-leaf"}}, ""); err != nil {
		t.Fatal(err)
	}
	waitIndexCurrent(t)
	// 50 s is within the bound: still trusted.
	ageIndexes(t, 50*time.Second)
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{GenerateName: "st-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "st-leaf"}}
	err := eventually(t, false, func() error {
		_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, dry)
		return err
	})
	mustAdmit(t, err)

	ageIndexes(t, 2*time.Minute)
	const stale = "over 60s before this request: serve's queueindex controller keeps it"
	err = eventually(t, true, func() error {
		_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, dry)
		return err
	})
	mustDenyBy(t, err, "vc-workload-open-queue", "the admission index states was last refreshed at ")
	mustDeny(t, err, stale)
	_, err = c.BatchV1alpha1().Jobs("default").Create(ctx, &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "st-"}, Spec: batchv1alpha1.JobSpec{Queue: "st-leaf"}}, dry)
	mustDeny(t, err, stale)
	_, err = c.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "st-new"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}, dry)
	mustAdmit(t, err)
	// An update reads the index as it is (it has no time of its own).
	err = updateQueue(ctx, c, "st-leaf", metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}, func(q *schedulingv1beta1.Queue) { q.Spec.Weight = 3 })
	mustAdmit(t, err)
}

// TestIndexMissing: without the index the policies refuse rather than
// admit, and install writes it anew from the queues.
func TestIndexMissing(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "ms-open"}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := indexer.stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := indexer.start(); err != nil {
			t.Error(err)
		}
	})
	if err := c.AdmissionV1alpha1().QueueIndexes().Delete(ctx, admissionv1alpha1.QueueIndexStates, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{GenerateName: "ms-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "ms-open"}}
	err := eventually(t, true, func() error {
		_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "vc-workload-open-queue") {
		t.Fatalf("a PodGroup with the index missing got %v, want a refusal by vc-workload-open-queue", err)
	}

	out, err := runInstall(t, &install.Options{})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if !strings.Contains(out, "queue index written") {
		t.Errorf("install did not say it wrote the index:\n%s", out)
	}
	if _, err := c.AdmissionV1alpha1().QueueIndexes().Get(ctx, admissionv1alpha1.QueueIndexStates, metav1.GetOptions{}); err != nil {
		t.Fatalf("install did not make the index anew: %v", err)
	}
	_, err = c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustAdmit(t, err)
}

// TestPerQueueMode: install --admission=per-queue swaps in the policies of
// the same names that go through every Queue (nothing needs to run), drops
// the indexes, and every rule that needs other queues still holds; doctor
// says which mode is in force. The index mode is installed again after.
func TestPerQueueMode(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	k := kube(t)
	out, err := runInstall(t, &install.Options{Selection: install.Selection{Policies: true, Admission: keys.AdmissionModePerQueue}})
	if err != nil {
		t.Fatalf("install --admission=per-queue: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		out, err := runInstall(t, indexInstall(install.Selection{Policies: true}))
		if err != nil {
			t.Errorf("install --admission=index: %v\n%s", err, out)
		}
		waitFresh(t)
	})
	for _, want := range []string{"vc-workload-open-queue-jobs deleted (not used in per-queue mode)", "vc-queue-hierarchy deleted (not used in per-queue mode)",
		"queueindex.admission.kubectl-vc.io/states deleted (not read in per-queue mode)"} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	b, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{})
	if err != nil || b.Spec.ParamRef == nil || b.Spec.ParamRef.Selector == nil || b.Labels[keys.AdmissionMode] != keys.AdmissionModePerQueue {
		t.Fatalf("binding vc-workload-open-queue in per-queue mode: %+v (%v)", b, err)
	}

	for _, q := range []*schedulingv1beta1.Queue{
		resourceQueue("pq-parent", "root", "cpu=4", "", ""),
		resourceQueue("pq-child", "pq-parent", "cpu=2", "", ""),
		{ObjectMeta: metav1.ObjectMeta{Name: "pq-closed"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}},
	} {
		if err := createQueueWithState(ctx, c, q, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"pq-closed", "pq-parent"} {
		if err := setState(ctx, c, n, schedulingv1beta1.QueueStateClosed); err != nil {
			t.Fatal(err)
		}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	err = eventually(t, true, func() error {
		_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "pq-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "pq-closed"}}, dry)
		return err
	})
	mustDenyBy(t, err, "vc-workload-open-queue", "queue pq-closed is Closed and accepts no new work")
	err = eventually(t, true, func() error {
		return c.SchedulingV1beta1().Queues().Delete(ctx, "pq-parent", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	})
	mustDenyBy(t, err, "vc-queue-delete-children", "queue pq-parent has child queue pq-child: delete it or move it to another parent first")
	_, err = c.SchedulingV1beta1().Queues().Create(ctx, resourceQueue("pq-big", "pq-parent", "cpu=8", "", ""), dry)
	mustDenyBy(t, err, "vc-queue-children", "queue pq-big exceeds its parent pq-parent in capability cpu")
	if err := setState(ctx, c, "pq-parent", schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	err = eventually(t, true, func() error {
		_, err := c.BatchV1alpha1().Jobs("default").Create(ctx, &batchv1alpha1.Job{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "pq-"}, Spec: batchv1alpha1.JobSpec{Queue: "pq-parent"}}, dry)
		if err != nil && strings.Contains(err.Error(), "accepts no new work") {
			return nil // still seen Closed: wait for Open
		}
		return err
	})
	mustDenyBy(t, err, "vc-workload-open-queue", "queue pq-parent has child queue pq-child: a job can only be submitted to a leaf queue")

	f := doctorFinding(t, "admission-index")
	if f.Status != doctor.OK || !strings.Contains(f.Message, "admission is in per-queue mode: each PodGroup, Job and queue request is checked against all") {
		t.Fatalf("doctor in per-queue mode: %+v", f)
	}
	// A plain install keeps the mode installed.
	if out, err := runInstall(t, &install.Options{}); err != nil {
		t.Fatalf("a plain install after per-queue: %v\n%s", err, out)
	}
	b, err = k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{})
	if err != nil || b.Labels[keys.AdmissionMode] != keys.AdmissionModePerQueue {
		t.Fatalf("a plain install after per-queue changed the mode: %v %v", b.Labels, err)
	}
}

// TestInstallUpgradesBindings: an installation from before the index (the
// workload binding over every Queue, a policy this build no longer ships)
// is brought to this build's objects by install.
func TestInstallUpgradesBindings(t *testing.T) {
	setup(t)
	ctx := context.Background()
	k := kube(t)
	b, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := b.DeepCopy()
	stale.ObjectMeta = metav1.ObjectMeta{Name: "vc-retired", Labels: map[string]string{"app.kubernetes.io/part-of": "kubectl-vc"}}
	stale.Spec.PolicyName = "vc-retired"
	stale.Spec.ParamRef = nil
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, stale, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := runInstall(t, &install.Options{})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if !strings.Contains(out, "validatingadmissionpolicybinding.admissionregistration.k8s.io/vc-retired deleted (no longer shipped)") &&
		!strings.Contains(out, "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io/vc-retired deleted (no longer shipped)") {
		t.Fatalf("install did not remove the retired binding:\n%s", out)
	}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-retired", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("retired binding still there: %v", err)
	}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{}); err != nil {
		t.Fatalf("a shipped binding went too: %v", err)
	}
}

// closedParentWithChild makes a Closed queue and an Open child of it: a
// deletion only the children rule refuses.
func closedParentWithChild(ctx context.Context, t *testing.T, c versioned.Interface, parent, child string) {
	t.Helper()
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: parent}}, schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: child}, Spec: schedulingv1beta1.QueueSpec{Parent: parent}}, ""); err != nil {
		t.Fatal(err)
	}
}

// earlierDeletePolicy writes vc-queue-delete as releases before issue 55's
// merge had it in every mode: without params, built-in and Closed only
// (the per-queue mode's policy of this release, without its mode label).
func earlierDeletePolicy(ctx context.Context, t *testing.T, k kubernetes.Interface) {
	t.Helper()
	objs, err := manifests.PolicyObjects(keys.AdmissionModePerQueue)
	if err != nil {
		t.Fatal(err)
	}
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, u := range objs {
		if u.GetName() != "vc-queue-delete" {
			continue
		}
		labels := u.GetLabels()
		delete(labels, keys.AdmissionMode)
		u.SetLabels(labels)
		var into any = &p
		if u.GetKind() == "ValidatingAdmissionPolicyBinding" {
			into = &b
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			t.Fatal(err)
		}
	}
	ar := k.AdmissionregistrationV1()
	if err := ar.ValidatingAdmissionPolicyBindings().Delete(ctx, "vc-queue-delete", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ar.ValidatingAdmissionPolicies().Delete(ctx, "vc-queue-delete", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestInstallUpgradesSplitDeletePolicies: from the release whose index
// mode checked a delete with two policies (vc-queue-delete without params,
// vc-queue-delete-children on the children index), install leaves one:
// vc-queue-delete on the children index refuses the delete of a parent,
// and vc-queue-delete-children is removed.
func TestInstallUpgradesSplitDeletePolicies(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c, k := vc(t), kube(t)
	closedParentWithChild(ctx, t, c, "sp-parent", "sp-child")
	ar := k.AdmissionregistrationV1()
	// The earlier release's children policy: this release's vc-queue-delete
	// under that name, in index mode.
	p, err := ar.ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ar.ValidatingAdmissionPolicyBindings().Get(ctx, "vc-queue-delete", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldP, oldB := p.DeepCopy(), b.DeepCopy()
	oldP.ObjectMeta = metav1.ObjectMeta{Name: "vc-queue-delete-children", Labels: p.Labels}
	oldB.ObjectMeta = metav1.ObjectMeta{Name: "vc-queue-delete-children", Labels: b.Labels}
	oldB.Spec.PolicyName = "vc-queue-delete-children"
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx, oldP, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx, oldB, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	earlierDeletePolicy(ctx, t, k)
	t.Cleanup(func() {
		_ = ar.ValidatingAdmissionPolicyBindings().Delete(ctx, "vc-queue-delete-children", metav1.DeleteOptions{})
		_ = ar.ValidatingAdmissionPolicies().Delete(ctx, "vc-queue-delete-children", metav1.DeleteOptions{})
		if out, err := runInstall(t, &install.Options{}); err != nil {
			t.Errorf("install: %v\n%s", err, out)
		}
	})
	if !slices.ContainsFunc(doctorFindings(t, "admission-index"), func(f doctor.Finding) bool {
		return f.Status == doctor.Warn && slices.Contains(f.Objects, "PolicyBinding vc-queue-delete-children")
	}) {
		t.Errorf("doctor does not name the earlier release's binding: %+v", doctorFindings(t, "admission-index"))
	}

	out, err := runInstall(t, &install.Options{})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	for _, want := range []string{
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/vc-queue-delete-children deleted (no longer shipped)",
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-delete-children deleted (no longer shipped)",
	} {
		if !strings.Contains(strings.ToLower(out), want) {
			t.Errorf("install did not say %q:\n%s", want, out)
		}
	}
	if _, err := ar.ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete-children", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("vc-queue-delete-children still there: %v", err)
	}
	if b, err := ar.ValidatingAdmissionPolicyBindings().Get(ctx, "vc-queue-delete", metav1.GetOptions{}); err != nil ||
		b.Spec.ParamRef == nil || b.Spec.ParamRef.Name != admissionv1alpha1.QueueIndexChildren || b.Labels[keys.AdmissionMode] != keys.AdmissionModeIndex {
		t.Fatalf("after install vc-queue-delete's binding is %+v, %v; want the index mode's, on the children index", b, err)
	}
	dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	err = eventually(t, true, func() error {
		err := c.SchedulingV1beta1().Queues().Delete(ctx, "sp-parent", dry)
		if err != nil && !strings.Contains(err.Error(), "with binding 'vc-queue-delete'") {
			return nil // the removed binding may still be in the API server's cache
		}
		return err
	})
	mustDenyBy(t, err, "vc-queue-delete", "queue sp-parent has child queue sp-child: delete it or move it to another parent first")
	if f := doctorFinding(t, "admission-index"); f.Status != doctor.OK {
		t.Errorf("after install doctor says %+v", f)
	}
}

// TestInstallUpgradesWebhookDeletes: from the release whose queue webhook
// also answered deletes (no children index, vc-queue-delete without
// params), serve of this release still answers a delete that configuration
// sends it, and a plain install moves deletes to the children index: the
// webhook configuration sends creates and updates only, the index is made
// and written, vc-queue-delete bound to it.
func TestInstallUpgradesWebhookDeletes(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c, k := vc(t), kube(t)
	closedParentWithChild(ctx, t, c, "up-parent", "up-child")
	// The earlier release's objects.
	earlierDeletePolicy(ctx, t, k)
	if err := c.AdmissionV1alpha1().QueueIndexes().Delete(ctx, admissionv1alpha1.QueueIndexChildren, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`[{"op":"replace","path":"/webhooks/0/rules/0/operations","value":["CREATE","UPDATE","DELETE"]}]`)
	if _, err := k.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, keys.QueueWebhookConfigName, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever failed above, the package's later tests get this
		// release's admission back.
		if out, err := runInstall(t, &install.Options{}); err != nil {
			t.Errorf("install: %v\n%s", err, out)
		}
	})
	dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	// Until the API server has dropped the binding it may still run it
	// (refusing with its message, or with "no params found" once the index
	// is gone from its cache).
	err := eventually(t, true, func() error {
		err := c.SchedulingV1beta1().Queues().Delete(ctx, "up-parent", dry)
		if err != nil && !strings.Contains(err.Error(), `admission webhook "`+keys.QueueWebhookName+`"`) {
			return nil
		}
		return err
	})
	mustDenyByWebhook(t, err, "queue up-parent has child queue up-child: delete it or move it to another parent first")

	out, err := runInstall(t, &install.Options{})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	vwc, err := k.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, keys.QueueWebhookConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ops := fmt.Sprint(vwc.Webhooks[0].Rules[0].Operations); ops != "[CREATE UPDATE]" {
		t.Fatalf("after install the webhook is sent %s, want creates and updates only", ops)
	}
	if e := entries(t, admissionv1alpha1.QueueIndexChildren); e["up-parent"].Children != 1 || e["up-parent"].Child != "up-child" {
		t.Fatalf("install wrote the children index as %+v, want up-parent's child up-child", e)
	}
	// The binding is new, and the API server may see it a moment before
	// the new index (docs/admission.md, Limits): "no params found".
	err = eventually(t, true, func() error {
		err := c.SchedulingV1beta1().Queues().Delete(ctx, "up-parent", dry)
		if err != nil && strings.Contains(err.Error(), "no params found") {
			return nil
		}
		return err
	})
	mustDenyBy(t, err, "vc-queue-delete", "queue up-parent has child queue up-child: delete it or move it to another parent first")
}

// doctorFinding returns doctor's one finding of a check.
func doctorFinding(t *testing.T, check string) doctor.Finding {
	t.Helper()
	found := doctorFindings(t, check)
	if len(found) != 1 {
		t.Fatalf("%s findings: %+v", check, found)
	}
	return found[0]
}

// doctorFindings returns doctor's findings of a check, but for the one
// that says where the queue webhook points.
func doctorFindings(t *testing.T, check string) []doctor.Finding {
	t.Helper()
	_, stdout, stderr := runCLI("doctor", "-o", "json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("doctor -o json: %v\nstdout %q\nstderr %q", err, stdout, stderr)
	}
	var found []doctor.Finding
	for _, f := range rep.Checks {
		// In the index mode the check says where the queue webhook
		// points in a finding of its own.
		if f.Check == check && !strings.Contains(f.Message, "the queue webhook "+keys.QueueWebhookName+" calls") {
			found = append(found, f)
		}
	}
	return found
}

// TestDoctorAdmissionIndex: doctor says when admission costs the same at
// any number of queues, and when not: an index that disagrees with the
// queues, one serve stopped refreshing (every create refused), the
// bindings of an earlier install.
func TestDoctorAdmissionIndex(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "dr-a"}}, ""); err != nil {
		t.Fatal(err)
	}
	waitIndexCurrent(t)
	f := doctorFinding(t, "admission-index")
	if f.Status != doctor.OK || !strings.Contains(f.Message, "admission is in index mode and the queue index is current") {
		t.Fatalf("with the index current: %+v", f)
	}

	ageIndexes(t, 10*time.Second)
	if err := setState(ctx, c, "dr-a", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	f = doctorFinding(t, "admission-index")
	if f.Status != doctor.Warn || !strings.Contains(f.Message, "states, jobs disagree with the queues") {
		t.Fatalf("with dr-a closed and nobody indexing: %+v", f)
	}
	ageIndexes(t, 5*time.Minute)
	f = doctorFinding(t, "admission-index")
	if f.Status != doctor.Fail || !strings.Contains(f.Message, "were not refreshed in the last 1m0s: serve's queueindex controller is not running") {
		t.Fatalf("with the index 5 minutes old: %+v", f)
	}

	k := kube(t)
	b, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := b.DeepCopy()
	old.ObjectMeta = metav1.ObjectMeta{Name: "vc-workload-open-queue-unindexed", Labels: map[string]string{"app.kubernetes.io/part-of": "kubectl-vc"}}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f = doctorFinding(t, "admission-index")
	if f.Status != doctor.Warn || f.Fix != "kubectl vc install --policies" || !strings.Contains(f.Message, "those of an earlier install (PolicyBinding vc-workload-open-queue-unindexed") {
		t.Fatalf("with an old binding: %+v", f)
	}
	out, err := runInstall(t, &install.Options{})
	if err != nil || !strings.Contains(out, "vc-workload-open-queue-unindexed deleted (no longer shipped)") {
		t.Fatalf("install over an old binding: %v\n%s", err, out)
	}
}
