package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// The admission queue index (docs/admission.md): the fast policies read one
// QueueIndex that serve's queueindex controller (running in-process for the
// package, see indexer) keeps, and trust it for the labelled queues only.

// waitIndexed waits until the index controller has labelled the queues.
func waitIndexed(t *testing.T, names ...string) {
	t.Helper()
	ctx := context.Background()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, n := range names {
			q, err := vc(t).SchedulingV1beta1().Queues().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			if _, ok := q.Labels[keys.AdmissionIndexed]; !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("queues %v not labelled %s by the queue index controller", names, keys.AdmissionIndexed)
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

// mustDenyBy asserts a denial with want by the named binding: which half of
// a rule refused tells whether the index or the queue-by-queue policy did.
func mustDenyBy(t *testing.T, err error, binding, want string) {
	t.Helper()
	mustDeny(t, err, want)
	if !strings.Contains(err.Error(), "with binding '"+binding+"'") {
		t.Fatalf("denied, but not by binding %s: %v", binding, err)
	}
}

// TestIndexHoldsStateAndChildren: the controller records the queues that
// are not Open and the parents' child counts, labels every queue, and the
// rules then refuse through the index: a PodGroup in a Closed queue, a Job
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
	waitIndexed(t, "ix-parent", "ix-child-a", "ix-child-b", "ix-closed")
	states, children, hierarchy := index(t, "states").Spec.Queues, index(t, "children").Spec.Queues, index(t, "hierarchy").Spec.Queues
	if e := children["ix-parent"]; e.Children != 2 || e.Child != "ix-child-a" || states["ix-parent"].State != "Closed" {
		t.Fatalf("ix-parent: children entry %+v, state %q; want 2 children, ix-child-a first, and Closed", e, states["ix-parent"].State)
	}
	if e := states["ix-closed"]; e.State != "Closed" {
		t.Fatalf("states entry of ix-closed = %+v, want Closed", e)
	}
	if _, ok := states["ix-child-a"]; ok {
		t.Fatalf("the Open ix-child-a has a states entry: %+v", states["ix-child-a"])
	}
	if e := hierarchy["ix-child-a"]; e.Parent != "ix-parent" {
		t.Fatalf("hierarchy entry of ix-child-a = %+v, want its parent", e)
	}
	if _, ok := hierarchy["ix-closed"]; ok {
		t.Fatalf("ix-closed (under root, no resources) has a hierarchy entry: %+v", hierarchy["ix-closed"])
	}

	_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ix-"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "ix-closed"}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
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
	mustDenyBy(t, err, "vc-job-leaf-queue", "queue ix-parent has child queue ix-child-a (and 1 more): a job can only be submitted to a leaf queue")

	if err := setState(ctx, c, "ix-parent", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, "ix-parent")
	err = c.SchedulingV1beta1().Queues().Delete(ctx, "ix-parent", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	mustDenyBy(t, err, "vc-queue-delete-children", "queue ix-parent has child queue ix-child-a (and 1 more): delete it or move it to another parent first")
}

// TestIndexedHierarchyRules: with parent and child labelled, the resource
// bounds and the cycle of two are refused through the index (the
// queue-by-queue half sees neither of them).
func TestIndexedHierarchyRules(t *testing.T) {
	setup(t)
	ctx := context.Background()
	qs := vc(t).SchedulingV1beta1().Queues()
	_, err := qs.Create(ctx, resourceQueue("ih-parent", "root", "cpu=8", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	_, err = qs.Create(ctx, resourceQueue("ih-child", "ih-parent", "cpu=6", "", ""), metav1.CreateOptions{})
	mustAdmit(t, err)
	waitIndexed(t, "ih-parent", "ih-child")
	if e := index(t, "hierarchy").Spec.Queues["ih-parent"]; e.ChildCapability["cpu"] != (admissionv1alpha1.QueueIndexBound{Amount: "6", Child: "ih-child"}) || e.Capability["cpu"] != "8" {
		t.Fatalf("index entry of ih-parent = %+v", e)
	}
	dry := metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}
	_, err = qs.Patch(ctx, "ih-parent", types.MergePatchType, []byte(`{"spec":{"capability":{"cpu":"4"}}}`), dry)
	mustDenyBy(t, err, "vc-queue-children", "queue ih-parent is below its child ih-child in capability cpu")
	_, err = qs.Create(ctx, resourceQueue("ih-other", "ih-parent", "cpu=9", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustDenyBy(t, err, "vc-queue-children", "queue ih-other exceeds its parent ih-parent in capability cpu")
	_, err = qs.Patch(ctx, "ih-parent", types.MergePatchType, []byte(`{"spec":{"parent":"ih-child"}}`), dry)
	mustDenyBy(t, err, "vc-queue-children", "queue ih-parent cannot have parent ih-child: the parent of ih-child is ih-parent, which would make a cycle")
}

// TestIndexLabelGuards: the label is serve's to set, a labelled queue
// cannot leave Open, and a change of parent takes the label off (the
// mutating policy), so that the index is never trusted for a queue it
// does not describe.
func TestIndexLabelGuards(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	for _, n := range []string{"lg-a", "lg-b"} {
		if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: n}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	waitIndexed(t, "lg-a", "lg-b")

	// A status write out of Open while labelled: refused, whoever writes.
	q := mustGetQueue(t, "lg-a")
	q.Status.State = schedulingv1beta1.QueueStateClosed
	_, err := c.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{})
	mustDeny(t, err, "queue lg-a carries the label "+keys.AdmissionIndexed+": remove it before moving the queue out of Open")

	// A parent change takes the label off in passing.
	patch := []byte(`{"spec":{"parent":"lg-b"}}`)
	var moved *schedulingv1beta1.Queue
	err = eventually(t, false, func() (err error) {
		moved, err = c.SchedulingV1beta1().Queues().Patch(ctx, "lg-a", types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			t.Logf("move: %v", err)
		}
		return err
	})
	mustAdmit(t, err)
	if _, ok := moved.Labels[keys.AdmissionIndexed]; ok {
		t.Fatalf("queue lg-a moved under lg-b kept the label: %v", moved.Labels)
	}
	// ... and the controller puts it back once the index counts lg-b's child.
	waitIndexed(t, "lg-a")
	if e := index(t, "children").Spec.Queues["lg-b"]; e.Children != 1 {
		t.Fatalf("index entry of lg-b = %+v, want 1 child", e)
	}

	// A tenant who may update queues but not the index may remove the label,
	// not set it.
	tenant := queueEditor(t, "lg-tenant")
	_, err = unlabel(ctx, tenant, "lg-b")
	mustAdmit(t, err)
	// (The controller may have labelled it again already: a change of the
	// value needs the same right as setting it.)
	setLabel := []byte(`{"metadata":{"labels":{"` + keys.AdmissionIndexed + `":"forged"}}}`)
	_, err = tenant.SchedulingV1beta1().Queues().Patch(ctx, "lg-b", types.MergePatchType, setLabel, metav1.PatchOptions{})
	mustDeny(t, err, "the label "+keys.AdmissionIndexed+" of queue lg-b is serve's to set")
	_, err = tenant.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "lg-forged", Labels: map[string]string{keys.AdmissionIndexed: "true"}},
		Spec:       schedulingv1beta1.QueueSpec{Weight: 1}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustDeny(t, err, "the label "+keys.AdmissionIndexed+" of queue lg-forged is serve's to set")
}

// queueEditor returns a client acting as a user who may create, read and
// change queues (and their status) but not the queue index.
func queueEditor(t *testing.T, user string) versioned.Interface {
	t.Helper()
	ctx := context.Background()
	k := kube(t)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"queues", "queues/status"},
		Verbs: []string{"get", "list", "create", "update", "patch"},
	}}}
	if _, err := k.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
	if _, err := k.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(cp.AdminConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c := versioned.NewForConfigOrDie(cfg)
	// The authorizer sees a new binding a moment later.
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("user %s never allowed to list queues: %v", user, last)
	}
	return c
}

// TestIndexMissingOrStopped: without the index the fast policies refuse
// rather than admit; install writes it anew from the queues, and with the
// controller stopped a queue closed meanwhile (its label gone) is refused
// by the queue-by-queue half.
func TestIndexMissingOrStopped(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "ms-open"}}, ""); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, "ms-open")
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
	_ = out
	if _, err := c.AdmissionV1alpha1().QueueIndexes().Get(ctx, admissionv1alpha1.QueueIndexStates, metav1.GetOptions{}); err != nil {
		t.Fatalf("install did not make the index anew: %v", err)
	}
	_, err = c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	mustAdmit(t, err)
	if err := setState(ctx, c, "ms-open", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	err = eventually(t, true, func() error {
		_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDenyBy(t, err, "vc-workload-open-queue-unindexed", "queue ms-open is Closed and accepts no new work")
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

// doctorFinding returns doctor's one finding of a check.
func doctorFinding(t *testing.T, check string) doctor.Finding {
	t.Helper()
	_, stdout, stderr := runCLI("doctor", "-o", "json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("doctor -o json: %v\nstdout %q\nstderr %q", err, stdout, stderr)
	}
	var found []doctor.Finding
	for _, f := range rep.Checks {
		if f.Check == check {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s findings: %+v", check, found)
	}
	return found[0]
}

// TestDoctorAdmissionIndex: doctor says when admission costs the same at
// any number of queues, and when not: queues the index does not hold yet,
// an index that disagrees with the queues, a binding of an earlier install
// that goes through every Queue.
func TestDoctorAdmissionIndex(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "dr-a"}}, ""); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, "dr-a")
	var f doctor.Finding
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		f = doctorFinding(t, "admission-index")
		return f.Status == doctor.OK, nil
	})
	if f.Status != doctor.OK || !strings.Contains(f.Message, "queues are in the queue index") {
		t.Fatalf("with every queue indexed: %+v", f)
	}

	if err := indexer.stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := indexer.start(); err != nil {
			t.Error(err)
		}
	})
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "dr-new"}}, ""); err != nil {
		t.Fatal(err)
	}
	f = doctorFinding(t, "admission-index")
	if f.Status != doctor.Warn || !strings.Contains(f.Message, "are not in the queue index (dr-new)") {
		t.Fatalf("with dr-new not indexed: %+v", f)
	}
	if err := setState(ctx, c, "dr-a", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	f = doctorFinding(t, "admission-index")
	if f.Status != doctor.Warn || !strings.Contains(f.Message, "states disagree with the queues") {
		t.Fatalf("with dr-a closed and nobody indexing: %+v", f)
	}

	k := kube(t)
	b, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue-unindexed", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Spec.ParamRef.Selector = &metav1.LabelSelector{}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, err := runInstall(t, &install.Options{}); err != nil {
			t.Errorf("install: %v\n%s", err, out)
		}
	})
	f = doctorFinding(t, "admission-index")
	if f.Status != doctor.Warn || f.Fix != "kubectl vc install --policies" || !strings.Contains(f.Message, "go through every Queue for each request") {
		t.Fatalf("with an old binding: %+v", f)
	}
}
