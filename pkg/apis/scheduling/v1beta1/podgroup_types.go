package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupPhase is the scheduling phase of a podgroup.
// +kubebuilder:validation:Enum=Pending;Running;Unknown;Inqueue;Completed
type PodGroupPhase string

const (
	// PodGroupPending waits to be admitted by the scheduler.
	PodGroupPending PodGroupPhase = "Pending"
	// PodGroupRunning has at least minMember pods running.
	PodGroupRunning PodGroupPhase = "Running"
	// PodGroupUnknown has some pods running but fewer than minMember.
	PodGroupUnknown PodGroupPhase = "Unknown"
	// PodGroupInqueue has been admitted and waits for its pods to be bound.
	PodGroupInqueue PodGroupPhase = "Inqueue"
	// PodGroupCompleted has finished.
	PodGroupCompleted PodGroupPhase = "Completed"
)

// PodGroupConditionType is the kind of a podgroup condition.
type PodGroupConditionType string

const (
	// PodGroupUnschedulableType says the group could not be scheduled.
	PodGroupUnschedulableType PodGroupConditionType = "Unschedulable"
	// PodGroupScheduled says the group was scheduled.
	PodGroupScheduled PodGroupConditionType = "Scheduled"
)

// NetworkTopologyMode is how strictly a group keeps to its network tier.
// +kubebuilder:validation:Enum=hard;soft
type NetworkTopologyMode string

const (
	// HardNetworkTopologyMode never spans beyond the highest tier allowed.
	HardNetworkTopologyMode NetworkTopologyMode = "hard"
	// SoftNetworkTopologyMode prefers, but does not require, the tier.
	SoftNetworkTopologyMode NetworkTopologyMode = "soft"
)

// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=podgroups,scope=Namespaced,shortName={pg,podgroup-v1beta1}
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="minMember",type=integer,JSONPath=`.spec.minMember`
// +kubebuilder:printcolumn:name="RUNNINGS",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="QUEUE",type=string,priority=1,JSONPath=`.spec.queue`

// PodGroup is a set of pods scheduled together (gang scheduling).
//
// Upstream declares no status subresource for PodGroup, so its status is
// written together with the object (hence +genclient:noStatus).
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired shape of the group.
	// +optional
	Spec PodGroupSpec `json:"spec,omitempty"`
	// Status is maintained by the scheduler.
	// +optional
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupSpec is the desired shape of a podgroup.
type PodGroupSpec struct {
	// MinMember is the number of pods that must be schedulable together.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinMember int32 `json:"minMember,omitempty"`
	// MinTaskMember is the minimum number of pods per task.
	// +optional
	MinTaskMember map[string]int32 `json:"minTaskMember,omitempty"`
	// Queue is the queue the group is scheduled from.
	// +kubebuilder:default=default
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Queue string `json:"queue,omitempty"`
	// PriorityClassName is the priority class of the group.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// MinResources is what the group needs to start.
	// +optional
	MinResources *corev1.ResourceList `json:"minResources,omitempty"`
	// NetworkTopology constrains where the group's pods may be placed.
	// +optional
	NetworkTopology *NetworkTopologySpec `json:"networkTopology,omitempty"`
	// SubGroupPolicy splits the group into subgroups.
	// +optional
	SubGroupPolicy []SubGroupPolicySpec `json:"subGroupPolicy,omitempty"`
}

// NetworkTopologySpec constrains the network tiers a group may span.
type NetworkTopologySpec struct {
	// Mode is hard or soft.
	// +kubebuilder:default=hard
	// +optional
	Mode NetworkTopologyMode `json:"mode,omitempty"`
	// HighestTierAllowed is the highest tier the group may span.
	// +kubebuilder:validation:Minimum=0
	// +optional
	HighestTierAllowed *int `json:"highestTierAllowed,omitempty"`
	// HighestTierName names the highest tier the group may span.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	HighestTierName string `json:"highestTierName,omitempty"`
}

// SubGroupPolicySpec describes one kind of subgroup.
type SubGroupPolicySpec struct {
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	NetworkTopology *NetworkTopologySpec `json:"networkTopology,omitempty"`
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +optional
	SubGroupSize *int32 `json:"subGroupSize,omitempty"`
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// +listType=atomic
	// +optional
	MatchLabelKeys []string `json:"matchLabelKeys,omitempty"`
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinSubGroups *int32 `json:"minSubGroups,omitempty"`
}

// PodGroupStatus is the observed state of a podgroup.
type PodGroupStatus struct {
	// Phase is the scheduling phase.
	// +optional
	Phase PodGroupPhase `json:"phase,omitempty"`
	// Conditions are the latest observations of the group.
	// +optional
	Conditions []PodGroupCondition `json:"conditions,omitempty"`
	// Running is the number of running pods.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Running int32 `json:"running,omitempty"`
	// Succeeded is the number of pods that succeeded.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// Failed is the number of pods that failed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`
}

// PodGroupCondition is one observation of a podgroup.
type PodGroupCondition struct {
	// +optional
	Type PodGroupConditionType `json:"type,omitempty"`
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
	// +optional
	TransitionID string `json:"transitionID,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// PodGroupList is a list of podgroups.
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodGroup `json:"items"`
}
