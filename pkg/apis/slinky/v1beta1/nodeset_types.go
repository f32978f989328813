package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Well-known NodeSet keys. They are Slinky's, spelled exactly as its operator
// and slurmd images read them, so pods stay manageable by either controller.
const (
	// LabelPodIndex is the ordinal of a NodeSet pod.
	LabelPodIndex = "nodeset.slinky.slurm.net/pod-index"
	// LabelPodHostname is the hostname of a NodeSet pod, which is also the
	// name of its Slurm node.
	LabelPodHostname = "nodeset.slinky.slurm.net/pod-hostname"
	// AnnotationPodCordon marks a pod whose Slurm node must be drained
	// (scale-in, Kubernetes node cordon, or an operator's request).
	AnnotationPodCordon = "nodeset.slinky.slurm.net/pod-cordon"
	// AnnotationPodDeadline is the RFC 3339 time the last Slurm job on the
	// pod's node is expected to end.
	AnnotationPodDeadline = "nodeset.slinky.slurm.net/pod-deadline"

	// LabelPodName is the name of a NodeSet pod.
	LabelPodName = "nodeset.slinky.slurm.net/pod-name"
	// LabelScalingMode is the scaling mode a NodeSet pod was made for
	// (StatefulSet or DaemonSet).
	LabelScalingMode = "nodeset.slinky.slurm.net/scaling-mode"
	// LabelPodProtect is "true" on a NodeSet pod whose Slurm node runs jobs
	// while workload disruption protection is on: the NodeSet's
	// PodDisruptionBudget (maxUnavailable 0) selects these pods only.
	LabelPodProtect = "nodeset.slinky.slurm.net/pod-protect"
	// AnnotationPodDeletionCost ranks the pods of a NodeSet for scale-in:
	// an integer, lower goes first (default 0), best effort.
	AnnotationPodDeletionCost = "nodeset.slinky.slurm.net/pod-deletion-cost"

	// LabelRevisionHash is the ControllerRevision hash label of the
	// Kubernetes workload controllers (history.ControllerRevisionHashLabel).
	// A revision carries its hash; a pod carries the hash (not the name) of
	// the revision it was made from, as Slinky's operator labels them.
	LabelRevisionHash = "controller.kubernetes.io/hash"
	// LabelLegacyRevisionHash is the label earlier versions of this
	// controller put on pods, with the revision name as value. It is still
	// read, so pods made by them are not taken for outdated.
	LabelLegacyRevisionHash = "controller-revision-hash"

	// LabelAppName, LabelAppInstance and LabelAppComponent select the pods,
	// revisions, Service and PodDisruptionBudget of one NodeSet.
	LabelAppName      = "app.kubernetes.io/name"
	LabelAppInstance  = "app.kubernetes.io/instance"
	LabelAppComponent = "app.kubernetes.io/component"

	// AppName and AppComponent are the values Slinky gives worker pods.
	AppName      = "slurmd"
	AppComponent = "worker"
)

// NodeSetUpdateStrategyType says how template changes reach existing pods.
// +kubebuilder:validation:Enum=RollingUpdate;OnDelete;ScheduledUpdate
type NodeSetUpdateStrategyType string

const (
	// RollingUpdateNodeSetStrategyType replaces outdated pods a few at a time.
	RollingUpdateNodeSetStrategyType NodeSetUpdateStrategyType = "RollingUpdate"
	// OnDeleteNodeSetStrategyType only replaces pods that someone deleted.
	OnDeleteNodeSetStrategyType NodeSetUpdateStrategyType = "OnDelete"
	// ScheduledUpdateNodeSetStrategyType replaces outdated pods only inside
	// a maintenance window: a Slurm reservation with the MAINT flag over the
	// NodeSet's nodes (plugins/nodeset/scheduled.go).
	ScheduledUpdateNodeSetStrategyType NodeSetUpdateStrategyType = "ScheduledUpdate"
)

// ScalingMode says how the NodeSet scales.
// +kubebuilder:validation:Enum=DaemonSet;StatefulSet
type ScalingMode string

const (
	// ScalingModeStatefulSet keeps spec.replicas pods with stable ordinals.
	ScalingModeStatefulSet ScalingMode = "StatefulSet"
	// ScalingModeDaemonSet runs one pod per matching node.
	ScalingModeDaemonSet ScalingMode = "DaemonSet"
)

// PruneSlurmNodeRecords says when Slurm node records are deleted.
// +kubebuilder:validation:Enum=Never;NodeNotFound
type PruneSlurmNodeRecords string

// PersistentVolumeClaimRetentionPolicyType is Retain or Delete.
// +kubebuilder:validation:Enum=Retain;Delete
type PersistentVolumeClaimRetentionPolicyType string

const (
	// RetainPersistentVolumeClaimRetentionPolicyType keeps the claims.
	RetainPersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Retain"
	// DeletePersistentVolumeClaimRetentionPolicyType deletes the claims.
	DeletePersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Delete"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodesets,scope=Namespaced,shortName={nodesets,nss,slurmd}
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="DESIRED",type=integer,JSONPath=`.status.desired`,description="The number of nodes match the node selector and tolerations (DaemonSet mode) or replicas (StatefulSet mode)."
// +kubebuilder:printcolumn:name="REPLICAS",type=integer,JSONPath=`.status.replicas`,description="The current number of pods."
// +kubebuilder:printcolumn:name="UPDATED",type=integer,JSONPath=`.status.updatedReplicas`,description="The number of pods updated."
// +kubebuilder:printcolumn:name="READY",type=integer,JSONPath=`.status.readyReplicas`,description="The number of pods ready."
// +kubebuilder:printcolumn:name="IDLE",type=integer,JSONPath=`.status.slurmIdle`,priority=1,description="The number of IDLE slurm nodes."
// +kubebuilder:printcolumn:name="ALLOCATED",type=integer,JSONPath=`.status.slurmAllocated`,priority=1,description="The number of ALLOCATED/MIXED slurm nodes."
// +kubebuilder:printcolumn:name="DOWN",type=integer,JSONPath=`.status.slurmDown`,priority=1,description="The number of DOWN slurm nodes."
// +kubebuilder:printcolumn:name="DRAIN",type=integer,JSONPath=`.status.slurmDrain`,priority=1,description="The number of DRAIN slurm nodes."
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// NodeSet is the Schema for the nodesets API: a set of pods that are Slurm
// compute nodes (slurmd), each with a stable ordinal and hostname.
type NodeSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NodeSetSpec `json:"spec,omitempty"`
	// +optional
	Status NodeSetStatus `json:"status,omitempty"`
}

// NodeSetSpec defines the desired state of NodeSet
//
// Fields the controller does not act on are still modelled so that the
// generated schema equals upstream's and a read-modify-write never drops them.
type NodeSetSpec struct {
	// controllerRef is a reference to the Controller CR to which this has membership.
	ControllerRef corev1.LocalObjectReference `json:"controllerRef"`

	// replicas is the desired number of pods. Defaults to 1.
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// ScalingMode controls how the NodeSet scales pods.
	// +kubebuilder:default=StatefulSet
	// +optional
	ScalingMode ScalingMode `json:"scalingMode,omitempty"`

	// The slurmd container configuration (a corev1.Container).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Slurmd corev1.Container `json:"slurmd,omitempty"`

	// The logfile sidecar configuration (a corev1.Container).
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	LogFile corev1.Container `json:"logfile,omitempty"`

	// ExtraConf is added to the slurmd args as `--conf <extraConf>`.
	// +optional
	ExtraConf string `json:"extraConf,omitempty"`

	// Partition defines the Slurm partition configuration for this NodeSet.
	// +optional
	Partition NodeSetPartition `json:"partition,omitempty"`

	// SSH configuration for worker pods.
	// +optional
	SSH *NodeSetSSH `json:"ssh,omitempty"`

	// Template is the pod template of the NodeSet's pods.
	// +optional
	Template PodTemplate `json:"template,omitempty"`

	// volumeClaimTemplates is a list of claims that pods are allowed to reference.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +nullable
	// +optional
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`

	// updateStrategy says how template changes reach existing pods.
	// +optional
	UpdateStrategy NodeSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// PersistentVolumeClaimRetentionPolicy describes the lifecycle of claims
	// created from volumeClaimTemplates.
	// +optional
	PersistentVolumeClaimRetentionPolicy *NodeSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`

	// revisionHistoryLimit is the number of old ControllerRevisions kept.
	// +kubebuilder:default=0
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// minReadySeconds a pod must be ready to count as available.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// OrdinalPadding is how many digits the pod ordinal is zero-padded to.
	// +kubebuilder:default=0
	// +optional
	OrdinalPadding int `json:"ordinalPadding,omitempty"`

	// OversubscribeNode lets pods share a Kubernetes node.
	// +kubebuilder:default=false
	// +optional
	OversubscribeNode bool `json:"oversubscribeNode,omitempty"`

	// PinToNode pins pods to the Kubernetes node they first ran on.
	// +kubebuilder:default=false
	// +optional
	PinToNode bool `json:"pinToNode,omitempty"`

	// PruneSlurmNodeRecords controls when the operator deletes Slurm node records.
	// +kubebuilder:default=Never
	// +optional
	PruneSlurmNodeRecords PruneSlurmNodeRecords `json:"pruneSlurmNodeRecords,omitempty"`

	// WorkloadDisruptionProtection protects busy pods with a PodDisruptionBudget.
	// +kubebuilder:default=true
	// +optional
	WorkloadDisruptionProtection *bool `json:"workloadDisruptionProtection,omitempty"`
}

// NodeSetPartition is the Slurm partition of a NodeSet.
type NodeSetPartition struct {
	// Enabled will create a partition for this NodeSet.
	// +kubebuilder:default=false
	Enabled bool `json:"enabled"`
	// Config is added to the NodeSet's partition line.
	// +kubebuilder:validation:Pattern=`^[^\n]+$`
	// +optional
	Config string `json:"config,omitempty"`
}

// NodeSetSSH configures sshd in worker pods.
type NodeSetSSH struct {
	// Enabled controls whether SSH access is enabled for this NodeSet.
	// +kubebuilder:default=false
	Enabled bool `json:"enabled"`
	// ExtraSshdConfig is added to the end of `sshd_config`.
	// +optional
	ExtraSshdConfig string `json:"extraSshdConfig,omitempty"`
	// SssdConfRef is a reference to a secret containing the `sssd.conf`.
	SssdConfRef corev1.SecretKeySelector `json:"sssdConfRef"`
}

// PodTemplate is the template of the NodeSet's pods. Its spec is stored
// schemaless upstream, so it is preserved as is by the API server.
type PodTemplate struct {
	// Standard object's metadata.
	// +optional
	PodMetadata PodMetadata `json:"metadata,omitempty"`

	// PodSpec is a description of a pod.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	PodSpec corev1.PodSpec `json:"spec,omitempty"`
}

// PodMetadata is the subset of object metadata a pod template carries.
type PodMetadata struct {
	// Annotations is an unstructured key value map stored with a resource that may be
	// set by external tools to store and retrieve arbitrary metadata.
	// +nullable
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// Map of string keys and values that can be used to organize and categorize
	// (scope and select) objects.
	// +nullable
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// NodeSetUpdateStrategy says how template changes reach existing pods.
// +kubebuilder:validation:XValidation:rule="self.type != 'ScheduledUpdate' || (has(self.scheduledUpdate.startTime) && has(self.scheduledUpdate.duration))",message="scheduledUpdate.startTime and scheduledUpdate.duration are required when type is ScheduledUpdate"
type NodeSetUpdateStrategy struct {
	// Type indicates the type of the NodeSetUpdateStrategy.
	// +kubebuilder:default=RollingUpdate
	// +optional
	Type NodeSetUpdateStrategyType `json:"type,omitempty"`
	// RollingUpdate parameters, for type RollingUpdate.
	// +optional
	RollingUpdate *RollingUpdateNodeSetStrategy `json:"rollingUpdate,omitempty"`
	// scheduledUpdate describes the schedule on which NodeSet pods are to be updated.
	// +optional
	ScheduledUpdate *ScheduledUpdateNodeSetStrategy `json:"scheduledUpdate,omitempty"`
}

// RollingUpdateNodeSetStrategy bounds the disruption of a rolling update.
type RollingUpdateNodeSetStrategy struct {
	// The maximum number of pods that can be unavailable during the update.
	// +kubebuilder:default="25%"
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// ScheduledUpdateNodeSetStrategy is a maintenance window.
type ScheduledUpdateNodeSetStrategy struct {
	// An RFC3339 timestamp at which to begin NodeSet updates.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// The duration for which NodeSet updates should be conducted.
	// +kubebuilder:default="30m"
	// +optional
	Duration string `json:"duration,omitempty"`
	// List of additional flags to append to the Slurm reservation.
	// +nullable
	// +optional
	Flags []string `json:"flags,omitempty"`
}

// NodeSetPersistentVolumeClaimRetentionPolicy is the lifecycle of claims.
type NodeSetPersistentVolumeClaimRetentionPolicy struct {
	// WhenDeleted: what happens to claims when the NodeSet is deleted.
	// +kubebuilder:default=Retain
	// +optional
	WhenDeleted PersistentVolumeClaimRetentionPolicyType `json:"whenDeleted,omitempty"`
	// WhenScaled: what happens to claims of pods removed by a scale-in.
	// +kubebuilder:default=Retain
	// +optional
	WhenScaled PersistentVolumeClaimRetentionPolicyType `json:"whenScaled,omitempty"`
}

// NodeSetStatus defines the observed state of NodeSet
type NodeSetStatus struct {
	// observedGeneration is the most recent generation observed for this NodeSet.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Desired is the number of pods that should exist.
	// +optional
	Desired int32 `json:"desired,omitempty"`
	// Total number of non-terminated pods targeted by this NodeSet.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// readyReplicas is the number of pods with a Ready condition.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Total number of available pods (ready for at least minReadySeconds).
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// Total number of unavailable pods targeted by this NodeSet.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
	// Total number of non-terminated pods that have the desired template spec.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`
	// The number of running pods whose Slurm node is IDLE.
	// +optional
	SlurmIdle int32 `json:"slurmIdle,omitempty"`
	// The number of running pods whose Slurm node is ALLOCATED or MIXED.
	// +optional
	SlurmAllocated int32 `json:"slurmAllocated,omitempty"`
	// The number of running pods whose Slurm node is DOWN.
	// +optional
	SlurmDown int32 `json:"slurmDown,omitempty"`
	// The number of running pods whose Slurm node is DRAIN.
	// +optional
	SlurmDrain int32 `json:"slurmDrain,omitempty"`
	// NodeSetHash is the hash (label controller.kubernetes.io/hash) of the
	// update revision; the revision is named "<nodeset>-<hash>".
	NodeSetHash string `json:"nodeSetHash"`
	// Count of hash collisions for the NodeSet.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`
	// Selector of the pods, for the scale subresource (HPA).
	Selector string `json:"selector"`
	// OrdinalToNode stores the node name to pod ordinal map.
	// +nullable
	// +optional
	OrdinalToNode map[string]string `json:"ordinalToNode,omitempty"`
	// Represents the latest available observations of a NodeSet's current state.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// NodeSetList is a list of NodeSets.
type NodeSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeSet `json:"items"`
}
