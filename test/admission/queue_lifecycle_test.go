package admission

import (
	"context"
	"testing"

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
	// Even Closed, default stays; and the message does not suggest closing.
	err := c.SchedulingV1beta1().Queues().Delete(ctx, "default", metav1.DeleteOptions{})
	mustDeny(t, err, "queue default is built in and cannot be deleted")
	err = c.SchedulingV1beta1().Queues().Delete(ctx, "root", metav1.DeleteOptions{})
	mustDeny(t, err, "queue root is built in and cannot be deleted")
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

	mustAdmit(t, qs.Delete(ctx, "team-dev", metav1.DeleteOptions{}))
	err = eventually(t, false, func() error { return qs.Delete(ctx, "team", metav1.DeleteOptions{}) })
	mustAdmit(t, err)
}
