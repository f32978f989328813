package queue

import (
	"fmt"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// State is one state of a queue. Execute says which state an action leads
// to. Unlike Volcano's states, which call out to functions that write to the
// API server, ours are pure: the controller decides the target state first
// and writes once, which is what lets it skip writes that change nothing and
// fold several pending Commands into one status write.
type State interface {
	Execute(action string) (v1beta1.QueueState, error)
}

// NewState returns the state object of a queue status; podGroups is the
// number of podgroups the queue still holds, which decides Closing vs Closed.
// An empty state is a queue nobody has synced yet and counts as Open.
func NewState(state v1beta1.QueueState, podGroups int) State {
	switch state {
	case "", v1beta1.QueueStateOpen:
		return openState{podGroups}
	case v1beta1.QueueStateClosed:
		return closedState{}
	case v1beta1.QueueStateClosing:
		return closingState{podGroups}
	default:
		return unknownState{podGroups}
	}
}

// closedOrClosing is where CloseQueue leads: a queue still holding podgroups
// stays Closing until they are gone.
func closedOrClosing(podGroups int) v1beta1.QueueState {
	if podGroups == 0 {
		return v1beta1.QueueStateClosed
	}
	return v1beta1.QueueStateClosing
}

func unknownAction(action string) error {
	return fmt.Errorf("unknown queue action %q (want %s, %s or %s)", action,
		busv1alpha1.OpenQueueAction, busv1alpha1.CloseQueueAction, busv1alpha1.SyncQueueAction)
}

type openState struct{ podGroups int }

func (s openState) Execute(action string) (v1beta1.QueueState, error) {
	switch action {
	case busv1alpha1.OpenQueueAction, busv1alpha1.SyncQueueAction:
		return v1beta1.QueueStateOpen, nil
	case busv1alpha1.CloseQueueAction:
		return closedOrClosing(s.podGroups), nil
	}
	return "", unknownAction(action)
}

type closingState struct{ podGroups int }

func (s closingState) Execute(action string) (v1beta1.QueueState, error) {
	switch action {
	case busv1alpha1.OpenQueueAction:
		return v1beta1.QueueStateOpen, nil
	case busv1alpha1.CloseQueueAction, busv1alpha1.SyncQueueAction:
		// A sync is how Closing finishes: the last podgroup's deletion
		// re-syncs the queue and it becomes Closed.
		return closedOrClosing(s.podGroups), nil
	}
	return "", unknownAction(action)
}

type closedState struct{}

func (closedState) Execute(action string) (v1beta1.QueueState, error) {
	switch action {
	case busv1alpha1.OpenQueueAction:
		return v1beta1.QueueStateOpen, nil
	case busv1alpha1.CloseQueueAction, busv1alpha1.SyncQueueAction:
		return v1beta1.QueueStateClosed, nil
	}
	return "", unknownAction(action)
}

type unknownState struct{ podGroups int }

func (s unknownState) Execute(action string) (v1beta1.QueueState, error) {
	switch action {
	case busv1alpha1.OpenQueueAction:
		return v1beta1.QueueStateOpen, nil
	case busv1alpha1.CloseQueueAction:
		return closedOrClosing(s.podGroups), nil
	case busv1alpha1.SyncQueueAction:
		// Nothing tells a sync which state an Unknown queue should be in;
		// only an explicit open or close decides.
		return v1beta1.QueueStateUnknown, nil
	}
	return "", unknownAction(action)
}
