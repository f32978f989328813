package queue

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
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

func withProblem(q *v1beta1.Queue, problem string) *v1beta1.Queue {
	q = q.DeepCopy()
	if q.Annotations == nil {
		q.Annotations = map[string]string{}
	}
	q.Annotations[rules.HierarchyProblemAnnotation] = problem
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
		missing      bool     // the parent does not exist
		cycle        []string // the queue is in this parent cycle
		wantState    v1beta1.QueueState
		wantMark     bool
		wantProblem  string
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

		// A missing parent is neither Open nor Closed: nothing is followed,
		// the problem is reported once and the sync is retried.
		{name: "a missing parent does not reopen a child it closed", q: queueIn("a", closed, true), missing: true,
			wantState: closed, wantMark: true, wantProblem: "ParentMissing: root", wantEvents: []string{"ParentMissing"}, wantApplyErr: true},
		{name: "a missing parent does not close an open child", q: a, missing: true,
			wantState: open, wantProblem: "ParentMissing: root", wantEvents: []string{"ParentMissing"}, wantApplyErr: true},
		{name: "a new queue under a missing parent is Open, as in Volcano", q: queueIn("a", "", false), missing: true,
			wantState: open, wantProblem: "ParentMissing: root", wantEvents: []string{"ParentMissing"}, wantApplyErr: true},
		{name: "opening under a missing parent waits, the Command stays", q: queueIn("a", closed, false), missing: true,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "o", busv1alpha1.OpenQueueAction, "")}
			},
			wantState: closed, wantProblem: "ParentMissing: root", wantEvents: []string{"ParentMissing"}, wantApplyErr: true},
		{name: "closing under a missing parent applies", q: a, missing: true,
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "c", busv1alpha1.CloseQueueAction, "")}
			},
			wantState: closed, wantDone: []string{"c"}, wantProblem: "ParentMissing: root", wantEvents: []string{"ParentMissing"}, wantApplyErr: true},
		{name: "a reported missing parent is not reported again", q: withProblem(queueIn("a", open, false), "ParentMissing: root"), missing: true,
			wantState: open, wantProblem: "ParentMissing: root", wantApplyErr: true},

		// A cycle has no top: nothing in it holds a queue closed.
		{name: "a queue in a cycle with a closed parent stays open", q: a, parent: closed, cycle: []string{"a", "b", "a"},
			wantState: open, wantProblem: "ParentCycle: a -> b -> a", wantEvents: []string{"ParentCycle"}},
		{name: "a queue closed by its parent reopens once it is in a cycle", q: queueIn("a", closed, true), parent: closed, cycle: []string{"a", "b", "c", "a"},
			wantState: open, wantProblem: "ParentCycle: a -> b -> c -> a", wantEvents: []string{"ParentCycle"}},
		{name: "opening a queue in a cycle under a closed parent applies", q: queueIn("a", closed, false), parent: closed, cycle: []string{"a", "b", "a"},
			cmds: func(q *v1beta1.Queue) []*busv1alpha1.Command {
				return []*busv1alpha1.Command{cmdFor(q, "o", busv1alpha1.OpenQueueAction, "")}
			},
			wantState: open, wantDone: []string{"o"}, wantProblem: "ParentCycle: a -> b -> a", wantEvents: []string{"ParentCycle"}},
		{name: "a queue in a cycle closed by its user stays closed", q: withProblem(queueIn("a", closed, false), "ParentCycle: a -> b -> a"), parent: open, cycle: []string{"a", "b", "a"},
			wantState: closed, wantProblem: "ParentCycle: a -> b -> a"},
		{name: "a repaired hierarchy clears the problem", q: withProblem(a, "ParentCycle: a -> b -> a"), parent: open,
			wantState: open},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cmds []*busv1alpha1.Command
			if tc.cmds != nil {
				cmds = tc.cmds(tc.q)
			}
			parent := parentView{name: tc.q.Spec.Parent, state: tc.parent, missing: tc.missing, cycle: tc.cycle}
			if tc.q.Name != keys.RootQueue && parent.name == "" {
				parent.name = keys.RootQueue
			}
			if tc.missing {
				parent.state = ""
			}
			d := decide(tc.q, cmds, tc.podGroups, parent)
			if d.state != tc.wantState || d.mark != tc.wantMark {
				t.Errorf("state %q mark %v, want %q %v", d.state, d.mark, tc.wantState, tc.wantMark)
			}
			if d.problem != tc.wantProblem {
				t.Errorf("problem %q, want %q", d.problem, tc.wantProblem)
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

// TestDecideReportsWaitingOpen: an open that waits for its parent is
// reported (the Command, WaitingForParent, and a message naming the
// parent, its state and the command that ends the wait), not only retried.
func TestDecideReportsWaitingOpen(t *testing.T) {
	q := queueIn("dev", v1beta1.QueueStateClosed, false)
	q.Spec.Parent = "team-a"
	open := cmdFor(q, "dev-openqueue-x", busv1alpha1.OpenQueueAction, q.UID)
	for _, tc := range []struct {
		parent parentView
		want   string
	}{
		{parentView{name: "team-a", state: v1beta1.QueueStateClosed}, "OpenQueue Command default/dev-openqueue-x for queue dev waits: its parent queue team-a is Closed: it is applied once team-a is Open (kubectl vc queue open team-a)"},
		{parentView{name: "team-a", missing: true}, "OpenQueue Command default/dev-openqueue-x for queue dev waits: its parent queue team-a does not exist"},
	} {
		d := decide(q, []*busv1alpha1.Command{open}, 0, tc.parent)
		if d.waiting == nil || d.waiting.cmd != open || d.waiting.reason != WaitingForParent || !strings.HasPrefix(d.waiting.message, tc.want) {
			t.Errorf("parent %+v: waiting %+v, want %q", tc.parent, d.waiting, tc.want)
		}
		if d.applyErr == nil || len(d.done) != 0 {
			t.Errorf("parent %+v: the Command must stay and the sync be retried: %+v", tc.parent, d)
		}
	}
	if d := decide(q, []*busv1alpha1.Command{open}, 0, parentView{name: "team-a", state: v1beta1.QueueStateOpen}); d.waiting != nil {
		t.Errorf("open parent: waiting %+v", d.waiting)
	}
}
