package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Actions a Command may carry for a Queue target. The field is a plain
// string on the wire (as upstream), so these are untyped constants.
const (
	// OpenQueueAction opens a queue.
	OpenQueueAction = "OpenQueue"
	// CloseQueueAction closes a queue.
	CloseQueueAction = "CloseQueue"
	// SyncQueueAction re-computes a queue's state.
	SyncQueueAction = "SyncQueue"
)

// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=commands,scope=Namespaced

// Command is a request for an action on a target object. Clients create it;
// the target's controller applies the action and then deletes the Command.
type Command struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Action is the action to take, e.g. OpenQueue or CloseQueue.
	// +optional
	Action string `json:"action,omitempty"`
	// TargetObject is the object the action is for.
	// +optional
	TargetObject *metav1.OwnerReference `json:"target,omitempty"`
	// Reason is a short machine-readable reason for the request.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a human-readable explanation of the request.
	// +optional
	Message string `json:"message,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// CommandList is a list of commands.
type CommandList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Command `json:"items"`
}
