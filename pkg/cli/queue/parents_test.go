package queue

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

// TestRefuseClosedParents: 'queue open' refuses a queue held closed by a
// parent (naming it and the one command that opens everything needed) or
// whose parent is missing; a parent opened by the same call does not hold
// it closed; a queue in a parent cycle is not held closed.
func TestRefuseClosedParents(t *testing.T) {
	q := func(name, parent string, s schedulingv1beta1.QueueState) *schedulingv1beta1.Queue {
		return &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{Parent: parent},
			Status: schedulingv1beta1.QueueStatus{State: s}}
	}
	all := []*schedulingv1beta1.Queue{
		q("root", "", schedulingv1beta1.QueueStateOpen),
		q("org", "root", schedulingv1beta1.QueueStateClosed),
		q("team-a", "org", schedulingv1beta1.QueueStateClosing),
		q("dev", "team-a", schedulingv1beta1.QueueStateClosed),
		q("open-team", "root", schedulingv1beta1.QueueStateOpen),
		q("ok", "open-team", schedulingv1beta1.QueueStateClosed),
		q("orphan", "gone", schedulingv1beta1.QueueStateClosed),
		q("cyc-a", "cyc-b", schedulingv1beta1.QueueStateClosed),
		q("cyc-b", "cyc-a", schedulingv1beta1.QueueStateClosed),
	}
	c := vcfake.NewSimpleClientset()
	for _, x := range all {
		if _, err := c.SchedulingV1beta1().Queues().Create(context.Background(), x, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	byName := map[string]*schedulingv1beta1.Queue{}
	for _, x := range all {
		byName[x.Name] = x
	}
	for _, tc := range []struct {
		open []string
		want string
	}{
		{[]string{"dev"}, `cannot open queue "dev": its parent "team-a" is Closing, and a queue cannot be open under a closed parent: open them together (kubectl vc queue open org team-a dev)`},
		{[]string{"team-a", "dev"}, `cannot open queue "team-a": its parent "org" is Closed, and a queue cannot be open under a closed parent: open them together (kubectl vc queue open org team-a dev)`},
		{[]string{"org", "team-a", "dev"}, ""},
		{[]string{"dev", "org", "team-a"}, ""},
		{[]string{"ok"}, ""},
		{[]string{"orphan"}, `cannot open queue "orphan": its parent "gone" does not exist: create it (kubectl vc queue create gone) or move the queue (kubectl vc queue update orphan --parent NAME)`},
		{[]string{"cyc-a"}, ""},
	} {
		var qs []*schedulingv1beta1.Queue
		for _, n := range tc.open {
			qs = append(qs, byName[n])
		}
		err := refuseClosedParents(context.Background(), c, qs)
		got := ""
		if err != nil {
			got = util.Message(err)
		}
		if got != tc.want {
			t.Errorf("open %v:\n got %q\nwant %q", tc.open, got, tc.want)
		}
	}

	// A cluster where nothing made root yet: serve creates it before
	// applying any Command, and root is never closed, so no refusal.
	bare := q("bare", "", schedulingv1beta1.QueueStateClosed)
	c2 := vcfake.NewSimpleClientset(bare)
	if err := refuseClosedParents(context.Background(), c2, []*schedulingv1beta1.Queue{bare}); err != nil {
		t.Errorf("open without root: %v", err)
	}
}
