package queue

import (
	"fmt"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// parentView is what a sync knows of a queue's place in the hierarchy.
type parentView struct {
	// name is the queue's parent (root for a queue without one; "" for
	// root itself).
	name string
	// state is the parent's state; "" when it has none yet (Open).
	state v1beta1.QueueState
	// missing: no queue of that name exists.
	missing bool
	// cycle, when the queue is in a parent cycle, are the queues of the
	// cycle in parent order, starting and ending with the queue itself.
	cycle []string
}

// closed tells whether the parent holds the queue closed: it exists, is
// Closed or Closing, and is not in a cycle with the queue (a cycle has no
// top, so no queue in it may hold another closed).
func (p parentView) closed() bool {
	return !p.missing && p.cycle == nil && rules.HoldsChildrenClosed(p.state)
}

// problem is the hierarchy problem to report on the queue, as the value of
// rules.HierarchyProblemAnnotation: "" when there is none.
func (p parentView) problem() string {
	switch {
	case p.cycle != nil:
		return rules.HierarchyProblem(rules.ParentCycle, rules.FormatCycle(p.cycle))
	case p.missing:
		return rules.HierarchyProblem(rules.ParentMissing, p.name)
	}
	return ""
}

// warning is a Warning event the sync records on the queue.
type warning struct{ reason, message string }

// decision is what one sync of a queue decides, before it writes anything.
type decision struct {
	// state is the queue's state after its Commands, its parent and a
	// final SyncQueue.
	state v1beta1.QueueState
	// mark is whether the queue is to carry closed-by-parent.
	mark bool
	// problem is the hierarchy problem the queue is to carry
	// (rules.HierarchyProblemAnnotation), "" for none.
	problem string
	// done are the Commands applied (or refused for good): deleted once
	// the state is written.
	done []*busv1alpha1.Command
	// events are the Warnings to record.
	events []warning
	// applyErr, when set, makes the sync fail after writing what it
	// decided, so that the Commands still pending are retried.
	applyErr error
	// waiting, when set, is the Command that cannot be applied yet and
	// why: the sync reports it (a Warning event on the queue and on the
	// Command, a log line) so that nothing waits silently.
	waiting *waitingCommand
}

// WaitingForParent is the reason of the Warning events a queue controller
// records when an OpenQueue Command waits for the queue's parent (Closed,
// Closing or missing). 'kubectl vc command list -o wide' shows it.
const WaitingForParent = "WaitingForParent"

// waitingCommand is a Command the state machine cannot apply yet.
type waitingCommand struct {
	cmd             *busv1alpha1.Command
	reason, message string
}

// decide is the queue controller's decision, a pure function of what the
// sync read: the queue, its pending Commands in creation order, how many
// podgroups it has, and its parent.
//
//  1. run the Commands through the state machine: a Command for an earlier
//     queue of the same name is dropped (StaleCommand), closing root is
//     refused (CommandRefused), opening under a closed or missing parent
//     waits (applyErr; the Command stays), an invalid transition is
//     refused; an explicit open or close clears closed-by-parent;
//  2. repair the hierarchy: a queue under a closed parent closes and is
//     marked; a marked queue whose parent reopened opens again. A queue in
//     a parent cycle has no parent to follow: nothing in the cycle holds
//     it closed, and a mark left from before the cycle is undone, so no
//     queue of a cycle stays Closed for good. A queue whose parent is
//     missing is neither closed nor reopened by it: its state and mark
//     stay, the problem is reported (ParentMissing) and the sync fails so
//     that it is retried, as Volcano's controller retries it;
//  3. a final SyncQueue (Closing becomes Closed once no podgroup is left).
//
// A cycle or a missing parent is reported with a Warning event when it is
// first seen, and carried on the queue (problem) until it is gone.
func decide(q *v1beta1.Queue, pending []*busv1alpha1.Command, podGroups int, parent parentView) decision {
	d := decision{
		state:   q.Status.State,
		mark:    q.Annotations[keys.ClosedByParent] == "true",
		problem: parent.problem(),
	}
	root := q.Name == keys.RootQueue
	if d.problem != "" && d.problem != q.Annotations[rules.HierarchyProblemAnnotation] {
		if parent.cycle != nil {
			d.events = append(d.events, warning{rules.ParentCycle, fmt.Sprintf("queue %s is in a parent cycle (%s): no queue of it can reach root; its parents are ignored until the cycle is broken (kubectl vc queue update NAME --parent ...)", q.Name, rules.FormatCycle(parent.cycle))})
		} else {
			d.events = append(d.events, warning{rules.ParentMissing, fmt.Sprintf("parent queue %s of queue %s does not exist: create it or move the queue (kubectl vc queue update %s --parent ...)", parent.name, q.Name, q.Name)})
		}
	}
	for _, cmd := range pending {
		if uid := cmd.TargetObject.UID; uid != "" && uid != q.UID {
			// For an earlier queue of the same name. With no garbage
			// collector to remove it, we do: it must not act on this queue.
			d.events = append(d.events, warning{"StaleCommand", fmt.Sprintf("deleted Command %s/%s: it targets an earlier queue %s (uid %s)", cmd.Namespace, cmd.Name, q.Name, uid)})
			d.done = append(d.done, cmd)
			continue
		}
		if cmd.Action == busv1alpha1.OpenQueueAction && !root && (parent.closed() || parent.missing) {
			// Retried: the parent may be opening (or appearing) right
			// now. The Command stays until it can be applied.
			var why string
			if parent.missing {
				d.applyErr = fmt.Errorf("cannot open queue %s: its parent %s does not exist", q.Name, parent.name)
				why = fmt.Sprintf("its parent queue %s does not exist: create it, or move the queue (kubectl vc queue update %s --parent ...)", parent.name, q.Name)
			} else {
				d.applyErr = fmt.Errorf("cannot open queue %s: its parent %s is %s", q.Name, parent.name, parent.state)
				why = fmt.Sprintf("its parent queue %s is %s: it is applied once %s is Open (kubectl vc queue open %s)", parent.name, parent.state, parent.name, parent.name)
			}
			d.waiting = &waitingCommand{cmd: cmd, reason: WaitingForParent,
				message: fmt.Sprintf("%s Command %s/%s for queue %s waits: %s", cmd.Action, cmd.Namespace, cmd.Name, q.Name, why)}
			break
		}
		if cmd.Action == busv1alpha1.CloseQueueAction && root {
			d.events = append(d.events, warning{"CommandRefused", fmt.Sprintf("Command %s/%s refused: the root queue can never be closed", cmd.Namespace, cmd.Name)})
			d.done = append(d.done, cmd)
			continue
		}
		next, err := NewState(d.state, podGroups).Execute(cmd.Action)
		if err != nil {
			d.events = append(d.events, warning{"CommandRefused", fmt.Sprintf("Command %s/%s refused: %v", cmd.Namespace, cmd.Name, err)})
			d.done = append(d.done, cmd)
			continue
		}
		if cmd.Action != busv1alpha1.SyncQueueAction {
			// An explicit open or close is the user's decision, not the
			// parent's: the child no longer follows its parent back open.
			d.mark = false
		}
		d.state = next
		d.done = append(d.done, cmd)
	}

	switch {
	case root:
	case parent.missing:
		// Nothing to follow: keep the state and the mark, and retry.
		if d.applyErr == nil {
			d.applyErr = fmt.Errorf("parent queue %s of queue %s does not exist", parent.name, q.Name)
		}
	case parent.closed() && (d.state == "" || d.state == v1beta1.QueueStateOpen || d.state == v1beta1.QueueStateUnknown):
		d.state, _ = NewState(d.state, podGroups).Execute(busv1alpha1.CloseQueueAction)
		d.mark = true
	case !parent.closed() && d.mark:
		// The parent reopened, or the queue is in a cycle and has no
		// parent to stay closed for.
		d.state = v1beta1.QueueStateOpen
		d.mark = false
	}
	d.state, _ = NewState(d.state, podGroups).Execute(busv1alpha1.SyncQueueAction)
	return d
}
