package queue

import (
	"fmt"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// warning is a Warning event the sync records on the queue.
type warning struct{ reason, message string }

// decision is what one sync of a queue decides, before it writes anything.
type decision struct {
	// state is the queue's state after its Commands, its parent and a
	// final SyncQueue.
	state v1beta1.QueueState
	// mark is whether the queue is to carry closed-by-parent.
	mark bool
	// done are the Commands applied (or refused for good): deleted once
	// the state is written.
	done []*busv1alpha1.Command
	// events are the Warnings to record.
	events []warning
	// applyErr, when set, makes the sync fail after writing what it
	// decided, so that the Commands still pending are retried.
	applyErr error
}

// decide is the queue controller's decision, a pure function of what the
// sync read: the queue, its pending Commands in creation order, how many
// podgroups it has, and its parent's state (closed: Closed or Closing).
//
//  1. run the Commands through the state machine: a Command for an earlier
//     queue of the same name is dropped (StaleCommand), closing root is
//     refused (CommandRefused), opening under a closed parent waits
//     (applyErr; the Command stays), an invalid transition is refused;
//     an explicit open or close clears closed-by-parent;
//  2. repair the hierarchy: a queue under a closed parent closes and is
//     marked; a marked queue whose parent reopened opens again;
//  3. a final SyncQueue (Closing becomes Closed once no podgroup is left).
func decide(q *v1beta1.Queue, pending []*busv1alpha1.Command, podGroups int, parentState v1beta1.QueueState, parentClosed bool) decision {
	d := decision{state: q.Status.State, mark: q.Annotations[keys.ClosedByParent] == "true"}
	root := q.Name == keys.RootQueue
	for _, cmd := range pending {
		if uid := cmd.TargetObject.UID; uid != "" && uid != q.UID {
			// For an earlier queue of the same name. With no garbage
			// collector to remove it, we do: it must not act on this queue.
			d.events = append(d.events, warning{"StaleCommand", fmt.Sprintf("deleted Command %s/%s: it targets an earlier queue %s (uid %s)", cmd.Namespace, cmd.Name, q.Name, uid)})
			d.done = append(d.done, cmd)
			continue
		}
		if cmd.Action == busv1alpha1.OpenQueueAction && parentClosed && !root {
			// Retried: the parent may be opening right now. The Command
			// stays until it can be applied.
			d.applyErr = fmt.Errorf("cannot open queue %s: its parent %s is %s", q.Name, q.Spec.Parent, parentState)
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

	if !root {
		switch {
		case parentClosed && (d.state == "" || d.state == v1beta1.QueueStateOpen || d.state == v1beta1.QueueStateUnknown):
			d.state, _ = NewState(d.state, podGroups).Execute(busv1alpha1.CloseQueueAction)
			d.mark = true
		case !parentClosed && d.mark:
			d.state = v1beta1.QueueStateOpen
			d.mark = false
		}
	}
	d.state, _ = NewState(d.state, podGroups).Execute(busv1alpha1.SyncQueueAction)
	return d
}
