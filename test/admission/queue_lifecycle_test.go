package admission

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestRootQueueNeverClosed(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "root"}}, schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	// Status writes are matched: not even the controller may close root.
	for _, s := range []schedulingv1beta1.QueueState{schedulingv1beta1.QueueStateClosing, schedulingv1beta1.QueueStateClosed} {
		mustDeny(t, setState(ctx, c, "root", s), "the root queue cannot be closed: close its child queues instead")
	}
	mustAdmit(t, setState(ctx, c, "root", schedulingv1beta1.QueueStateUnknown))
	mustAdmit(t, setState(ctx, c, "root", schedulingv1beta1.QueueStateOpen))

	// Other queues may be closed through their status.
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "closable"}}, ""); err != nil {
		t.Fatal(err)
	}
	mustAdmit(t, setState(ctx, c, "closable", schedulingv1beta1.QueueStateClosing))
	mustAdmit(t, setState(ctx, c, "closable", schedulingv1beta1.QueueStateClosed))

	// The usual way to close is a CloseQueue Command: refused for root up front.
	cmd := func(name, action, queue string) *busv1alpha1.Command {
		return &busv1alpha1.Command{
			ObjectMeta:   metav1.ObjectMeta{Name: name, Namespace: "default"},
			Action:       action,
			TargetObject: &metav1.OwnerReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: queue, UID: "00000000-0000-0000-0000-000000000001"},
		}
	}
	cmds := c.BusV1alpha1().Commands("default")
	_, err := cmds.Create(ctx, cmd("close-root", busv1alpha1.CloseQueueAction, "root"), metav1.CreateOptions{})
	mustDeny(t, err, "the root queue cannot be closed")
	_, err = cmds.Create(ctx, cmd("open-root", busv1alpha1.OpenQueueAction, "root"), metav1.CreateOptions{})
	mustAdmit(t, err)
	_, err = cmds.Create(ctx, cmd("close-other", busv1alpha1.CloseQueueAction, "closable"), metav1.CreateOptions{})
	mustAdmit(t, err)
}

func TestQueueDeleteOnlyWhenClosed(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	qs := c.SchedulingV1beta1().Queues()
	for name, state := range map[string]schedulingv1beta1.QueueState{
		"del-open": schedulingv1beta1.QueueStateOpen, "del-empty": "",
		"del-closing": schedulingv1beta1.QueueStateClosing, "del-unknown": schedulingv1beta1.QueueStateUnknown,
		"del-closed": schedulingv1beta1.QueueStateClosed,
	} {
		if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}, state); err != nil {
			t.Fatal(err)
		}
	}
	mustDeny(t, qs.Delete(ctx, "del-open", metav1.DeleteOptions{}), "queue del-open is Open: close it first: kubectl vc queue close del-open --wait")
	// An empty state is what a queue has before the controller saw it: Open.
	mustDeny(t, qs.Delete(ctx, "del-empty", metav1.DeleteOptions{}), "queue del-empty is Open: close it first")
	mustDeny(t, qs.Delete(ctx, "del-unknown", metav1.DeleteOptions{}), "queue del-unknown is Unknown: close it first")
	mustDeny(t, qs.Delete(ctx, "del-closing", metav1.DeleteOptions{}), "queue del-closing is Closing: wait until its podgroups are gone (kubectl vc queue close del-closing --wait)")
	mustAdmit(t, qs.Delete(ctx, "del-closed", metav1.DeleteOptions{}))
	if _, err := qs.Get(ctx, "del-open", metav1.GetOptions{}); err != nil {
		t.Fatalf("denied delete removed the queue: %v", err)
	}
}

func TestBuiltInQueuesUndeletable(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "root"}}, schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	// Both have a child, so vc-queue-children could refuse them too. The API
	// server reports the first denial of the policies it ran, in no fixed
	// order: the built-in refusal must be the only one, every time.
	qs := c.SchedulingV1beta1().Queues()
	for _, q := range []*schedulingv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "bi-under-default"}, Spec: schedulingv1beta1.QueueSpec{Parent: "default"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bi-under-root"}, Spec: schedulingv1beta1.QueueSpec{Parent: "root"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bi-marker"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "bi-marker-child"}, Spec: schedulingv1beta1.QueueSpec{Parent: "bi-marker"}},
	} {
		if err := createQueueWithState(ctx, c, q, schedulingv1beta1.QueueStateClosed); err != nil {
			t.Fatal(err)
		}
	}
	// Params come from the API server's cache, in the order written: once it
	// has the last child, it has the children of root and default.
	err := eventually(t, true, func() error {
		return qs.Delete(ctx, "bi-marker", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	})
	mustDeny(t, err, "queue bi-marker has child queue bi-marker-child")
	for i := 0; i < 6; i++ {
		// The order is drawn again each time the server rebuilds its policy
		// set: if the built-in refusal were not the only one, six draws
		// would all favour it by luck about once in 64 runs.
		redrawPolicyOrder(t)
		// Even Closed, default stays; and the message does not suggest closing.
		mustDeny(t, qs.Delete(ctx, "default", metav1.DeleteOptions{}), "queue default is built in and cannot be deleted")
		mustDeny(t, qs.Delete(ctx, "root", metav1.DeleteOptions{}), "queue root is built in and cannot be deleted")
	}
	mustAdmit(t, setState(ctx, c, "default", schedulingv1beta1.QueueStateOpen))
}

func TestQueueWithChildrenUndeletable(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	qs := c.SchedulingV1beta1().Queues()
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	if err := createQueueWithState(ctx, c, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "team-dev"}, Spec: schedulingv1beta1.QueueSpec{Parent: "team"}}, schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	// The params (queues) reach the policy through the server's informers.
	err := eventually(t, true, func() error { return qs.Delete(ctx, "team", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}) })
	mustDeny(t, err, "queue team has child queue team-dev: delete it or move it to another parent first")
	mustDeny(t, qs.Delete(ctx, "team", metav1.DeleteOptions{}), "queue team has child queue team-dev")

	// Open and with a child: one reason, whatever order the server runs
	// the policies in (see TestBuiltInQueuesUndeletable): close it first.
	if err := setState(ctx, c, "team", schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		redrawPolicyOrder(t)
		mustDeny(t, qs.Delete(ctx, "team", metav1.DeleteOptions{}), "queue team is Open: close it first")
	}
	if err := setState(ctx, c, "team", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}

	mustAdmit(t, qs.Delete(ctx, "team-dev", metav1.DeleteOptions{}))
	err = eventually(t, false, func() error { return qs.Delete(ctx, "team", metav1.DeleteOptions{}) })
	mustAdmit(t, err)
}

// redraws numbers the calls of redrawPolicyOrder, so that no two refuse
// the same name.
var redraws atomic.Int32

// redrawPolicyOrder makes the API server rebuild its set of admission
// policies, whose order (the order their denials are found in) comes from
// iterating a map, and returns once the rebuilt set is in force: a policy of
// the test's own refuses creating queue "refresh-<n>", with a new n each
// call.
func redrawPolicyOrder(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	policies := kube(t).AdmissionregistrationV1().ValidatingAdmissionPolicies()
	name := fmt.Sprintf("refresh-%d", redraws.Add(1))
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "test-policy-redraw"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"scheduling.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"queues"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: fmt.Sprintf("object.metadata.name != %q", name), Message: "redrawn " + name}},
		},
	}
	existing, err := policies.Get(ctx, policy.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = policies.Create(ctx, policy, metav1.CreateOptions{})
		if err == nil {
			t.Cleanup(func() { _ = policies.Delete(ctx, policy.Name, metav1.DeleteOptions{}) })
			bindings := kube(t).AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
			_, err = bindings.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
					PolicyName:        policy.Name,
					ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
				},
			}, metav1.CreateOptions{})
			t.Cleanup(func() { _ = bindings.Delete(ctx, policy.Name, metav1.DeleteOptions{}) })
		}
	case err == nil:
		existing.Spec.Validations = policy.Spec.Validations
		_, err = policies.Update(ctx, existing, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	probe := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err = eventually(t, true, func() error {
		_, err := vc(t).SchedulingV1beta1().Queues().Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	mustDeny(t, err, "redrawn "+name)
}
