package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueueState is the lifecycle state of a queue.
// +kubebuilder:validation:Enum=Open;Closed;Closing;Unknown
type QueueState string

const (
	// QueueStateOpen accepts new podgroups. An empty state also counts as Open.
	QueueStateOpen QueueState = "Open"
	// QueueStateClosed accepts nothing and holds no podgroups.
	QueueStateClosed QueueState = "Closed"
	// QueueStateClosing accepts nothing but still holds podgroups.
	QueueStateClosing QueueState = "Closing"
	// QueueStateUnknown is a state the controller could not determine.
	QueueStateUnknown QueueState = "Unknown"
)

// DequeueStrategy is how the scheduler takes jobs out of a queue.
// +kubebuilder:validation:Enum=fifo;traverse
type DequeueStrategy string

const (
	// DequeueStrategyFIFO takes jobs strictly in order.
	DequeueStrategyFIFO DequeueStrategy = "fifo"
	// DequeueStrategyTraverse skips jobs that do not fit.
	DequeueStrategyTraverse DequeueStrategy = "traverse"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=queues,scope=Cluster,shortName={q,queue-v1beta1}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="PARENT",type=string,JSONPath=`.spec.parent`

// Queue is a cluster-wide bucket of resources that podgroups are scheduled from.
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired configuration of the queue.
	// +optional
	Spec QueueSpec `json:"spec,omitempty"`
	// Status is maintained by the queue controller.
	// +optional
	Status QueueStatus `json:"status,omitempty"`
}

// QueueSpec is the desired configuration of a queue.
type QueueSpec struct {
	// Weight is the queue's share relative to its siblings.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Weight int32 `json:"weight,omitempty"`
	// Capability is the most the queue may use.
	// +optional
	Capability corev1.ResourceList `json:"capability,omitempty"`
	// Reclaimable says whether others may reclaim what the queue uses beyond its deserved share.
	// +optional
	Reclaimable *bool `json:"reclaimable,omitempty"`
	// ExtendClusters lists clusters the queue's jobs may be dispatched to.
	// +optional
	ExtendClusters []Cluster `json:"extendClusters,omitempty"`
	// Guarantee is reserved for the queue and never lent to others.
	// +optional
	Guarantee Guarantee `json:"guarantee,omitempty"`
	// Affinity ties the queue to node groups.
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`
	// Type is a free-form kind of queue.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Type string `json:"type,omitempty"`
	// Parent is the name of the parent queue; empty means root.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Parent string `json:"parent,omitempty"`
	// Deserved is the share the queue is entitled to when the cluster is full.
	// +optional
	Deserved corev1.ResourceList `json:"deserved,omitempty"`
	// Priority orders queues; higher is scheduled first and reclaimed last.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Priority int32 `json:"priority,omitempty"`
	// DequeueStrategy is how jobs leave the queue.
	// +kubebuilder:default=traverse
	// +optional
	DequeueStrategy DequeueStrategy `json:"dequeueStrategy,omitempty"`
}

// Cluster is a cluster a queue may dispatch to.
type Cluster struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	Weight int32 `json:"weight,omitempty"`
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
}

// Guarantee is a reservation of resources for a queue.
type Guarantee struct {
	// Resource is the reserved amount.
	// +optional
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// Affinity ties a queue to node groups.
type Affinity struct {
	// +optional
	NodeGroupAffinity *NodeGroupAffinity `json:"nodeGroupAffinity,omitempty"`
	// +optional
	NodeGroupAntiAffinity *NodeGroupAntiAffinity `json:"nodeGroupAntiAffinity,omitempty"`
}

// NodeGroupAffinity lists node groups a queue's jobs should or must run on.
type NodeGroupAffinity struct {
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []string `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []string `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// NodeGroupAntiAffinity lists node groups a queue's jobs should or must avoid.
type NodeGroupAntiAffinity struct {
	// +optional
	RequiredDuringSchedulingIgnoredDuringExecution []string `json:"requiredDuringSchedulingIgnoredDuringExecution,omitempty"`
	// +optional
	PreferredDuringSchedulingIgnoredDuringExecution []string `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// QueueStatus is the observed state of a queue.
type QueueStatus struct {
	// State is the lifecycle state.
	// +optional
	State QueueState `json:"state,omitempty"`
	// Unknown is the number of podgroups in phase Unknown.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Unknown int32 `json:"unknown,omitempty"`
	// Pending is the number of podgroups in phase Pending.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// Running is the number of podgroups in phase Running.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Running int32 `json:"running,omitempty"`
	// Inqueue is the number of podgroups in phase Inqueue.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Inqueue int32 `json:"inqueue,omitempty"`
	// Completed is the number of podgroups in phase Completed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Completed int32 `json:"completed,omitempty"`
	// Reservation is what the scheduler holds for the queue's guarantee.
	// +optional
	Reservation Reservation `json:"reservation,omitempty"`
	// Allocated is what the queue's running work uses.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
}

// Reservation is what the scheduler holds for a queue.
type Reservation struct {
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// +optional
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// QueueList is a list of queues.
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Queue `json:"items"`
}
