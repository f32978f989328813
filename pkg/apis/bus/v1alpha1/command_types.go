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

// Actions a Command may carry for a batch.volcano.sh/v1alpha1 Job target.
// Volcano's job controller applies them; kubectl-vc serve has no job
// controller, so such a Command waits until Volcano's runs.
const (
	// AbortJobAction suspends a job: its pods are released and none are
	// made until it is resumed (phase Aborting, then Aborted).
	AbortJobAction = "AbortJob"
	// ResumeJobAction resumes an aborted job (Restarting, then Pending).
	ResumeJobAction = "ResumeJob"
	// RestartJobAction deletes every pod of a job and makes them again
	// (Restarting, then Pending); it counts as a retry.
	RestartJobAction = "RestartJob"
	// RestartTaskAction restarts the pods of one task of a job.
	RestartTaskAction = "RestartTask"
	// TerminateJobAction stops a job for good (Terminating, then Terminated).
	TerminateJobAction = "TerminateJob"
	// CompleteJobAction ends a job as Completed, killing unfinished pods.
	CompleteJobAction = "CompleteJob"
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
