package queue

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func queueIn(name string, state v1beta1.QueueState, marked bool) *v1beta1.Queue {
	q := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid")}}
	q.Spec.Parent = keys.RootQueue
	if name == keys.RootQueue {
		q.Spec.Parent = ""
	}
	q.Status.State = state
	if marked {
		q.Annotations = map[string]string{keys.ClosedByParent: "true"}
	}
	return q
}

func cmdFor(q *v1beta1.Queue, name, action string, uid types.UID) *busv1alpha1.Command {
	if uid == "" {
		uid = q.UID
	}
	return &busv1alpha1.Command{
		ObjectMeta:   metav1.ObjectMeta{Name: name, Namespace: "default"},
		Action:       action,
		TargetObject: &metav1.OwnerReference{Kind: "Queue", Name: q.Name, UID: uid},
	}
}

// TestDecide: the queue controller's decision for every kind of input it
// meets, without an API server.
func TestDecide(t *testing.T) {
	const (
		open    = v1beta1.QueueStateOpen
		closed  = v1beta1.QueueStateClosed
		closing = v1beta1.QueueStateClosing
	)
	a := queueIn("a", open, false)
	for _, tc := range []struct {
		name         string
		q            *v1beta1.Queue
		cmds         func(q *v1beta1.Queue) []*busv1alpha1.Command
		podGroups    int
		parent       v1beta1.QueueState
		wantState    v1beta1.QueueState
		wantMark     bool
		wantDone     []string
		wantEvents   []string
		wantApplyErr bool
	}{
		{name: "nothing to do keeps Open", q: a, parent: open, wantState: open},
		{name: "unset state syncs to Open", q: queueIn("a", "", false), parent: open, wantState: open},
		{name: "close without podgroups is Closed", q: a, parent: open,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "c1", busv1alpha1.CloseQueueAction, "")}
			},
			wantState: closed, wantDone: []string{"c1"}},
		{name: "close with podgroups is Closing", q: a, parent: open, podGroups: 2,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "c1", busv1alpha1.CloseQueueAction, "")}
			},
			wantState: closing, wantDone: []string{"c1"}},
		{name: "Closing becomes Closed when the last podgroup is gone", q: queueIn("a", closing, false), parent: open, wantState: closed},
		{name: "Commands apply in order: close then open", q: a, parent: open,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "c1", busv1alpha1.CloseQueueAction, ""), cmdFor(q, "c2", busv1alpha1.OpenQueueAction, "")}
			},
			wantState: open, wantDone: []string{"c1", "c2"}},
		{name: "a Command for an earlier queue of the name is dropped", q: a, parent: open,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "old", busv1alpha1.CloseQueueAction, "earlier")}
			},
			wantState: open, wantDone: []string{"old"}, wantEvents: []string{"StaleCommand"}},
		{name: "root is never closed", q: queueIn(keys.RootQueue, open, false),
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "r", busv1alpha1.CloseQueueAction, "")}
			},
			wantState: open, wantDone: []string{"r"}, wantEvents: []string{"CommandRefused"}},
		{name: "open under a closed parent waits, the Command stays", q: queueIn("a", closed, false), parent: closed,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "o", busv1alpha1.OpenQueueAction, ""), cmdFor(q, "later", busv1alpha1.CloseQueueAction, "")}
			},
			wantState: closed, wantApplyErr: true},
		{name: "an unknown action is refused and dropped", q: a, parent: open,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "x", "Explode", "")}
			},
			wantState: open, wantDone: []string{"x"}, wantEvents: []string{"CommandRefused"}},
		{name: "a parent closing closes and marks the child", q: a, parent: closing, podGroups: 1,
			wantState: closing, wantMark: true},
		{name: "a reopened parent reopens the child it closed", q: queueIn("a", closed, true), parent: open,
			wantState: open},
		{name: "an explicit close clears the mark: the queue no longer follows its parent open", q: queueIn("a", closed, true), parent: open,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "c", busv1alpha1.CloseQueueAction, "")}
			},
			wantState: closed, wantDone: []string{"c"}},
		{name: "a child closed by its user stays closed when the parent opens", q: queueIn("a", closed, false), parent: open,
			wantState: closed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cmds []*busv1alpha1.Command
			if tc.cmds != nil {
				cmds = tc.cmds(tc.q)
			}
			parentClosed := tc.parent == closed || tc.parent == closing
			d := decide(tc.q, cmds, tc.podGroups, tc.parent, parentClosed)
			if d.state != tc.wantState || d.mark != tc.wantMark {
				t.Errorf("state %q mark %v, want %q %v", d.state, d.mark, tc.wantState, tc.wantMark)
			}
			var done []string
			for _, c := range d.done {
				done = append(done, c.Name)
			}
			if len(done) != len(tc.wantDone) {
				t.Fatalf("done %v, want %v", done, tc.wantDone)
			}
			for i := range done {
				if done[i] != tc.wantDone[i] {
					t.Errorf("done %v, want %v", done, tc.wantDone)
				}
			}
			var reasons []string
			for _, e := range d.events {
				reasons = append(reasons, e.reason)
			}
			if len(reasons) != len(tc.wantEvents) || (len(reasons) > 0 && reasons[0] != tc.wantEvents[0]) {
				t.Errorf("events %v, want %v", reasons, tc.wantEvents)
			}
			if (d.applyErr != nil) != tc.wantApplyErr {
				t.Errorf("applyErr %v, want error: %v", d.applyErr, tc.wantApplyErr)
			}
		})
	}
}
