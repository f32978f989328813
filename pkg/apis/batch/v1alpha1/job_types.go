package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys Volcano's job controller puts on the pods of a Job. They are part
// of the wire contract: the CLI finds a Job's pods with them.
const (
	// JobNameLabel is the name of the Job a pod belongs to (label and annotation).
	JobNameLabel = "volcano.sh/job-name"
	// JobNamespaceLabel is the namespace of that Job.
	JobNamespaceLabel = "volcano.sh/job-namespace"
	// TaskSpecLabel is the name of the task of the Job the pod was made for.
	TaskSpecLabel = "volcano.sh/task-spec"
	// TaskIndexLabel is the pod's index within its task.
	TaskIndexLabel = "volcano.sh/task-index"
	// QueueNameLabel is the queue of the Job (label and annotation).
	QueueNameLabel = "volcano.sh/queue-name"
)

// JobPhase is where a Job is in its lifecycle.
type JobPhase string

// The phases of a Job, as Volcano's job controller writes them.
const (
	// JobPending waits for the scheduler to admit the job.
	JobPending JobPhase = "Pending"
	// JobAborting is being suspended: its pods are being released.
	JobAborting JobPhase = "Aborting"
	// JobAborted is suspended (AbortJob) and can be resumed (ResumeJob).
	JobAborted JobPhase = "Aborted"
	// JobRunning has at least minAvailable pods running.
	JobRunning JobPhase = "Running"
	// JobRestarting is releasing its pods before creating them again.
	JobRestarting JobPhase = "Restarting"
	// JobCompleting is releasing the pods of a job that is done.
	JobCompleting JobPhase = "Completing"
	// JobCompleted finished successfully.
	JobCompleted JobPhase = "Completed"
	// JobTerminating is being stopped for good: its pods are being released.
	JobTerminating JobPhase = "Terminating"
	// JobTerminated was stopped for good (TerminateJob) and cannot be resumed.
	JobTerminated JobPhase = "Terminated"
	// JobFailed ran out of retries.
	JobFailed JobPhase = "Failed"
)

// Event is what a lifecycle policy reacts to.
// +kubebuilder:validation:Enum=*;PodPending;PodRunning;PodFailed;PodEvicted;Unknown;TaskCompleted;OutOfSync;CommandIssued;JobUpdated;TaskFailed
type Event string

// NumaPolicy is the NUMA topology policy of a task's pods.
// +kubebuilder:validation:Enum=none;best-effort;restricted;single-numa-node
type NumaPolicy string

// NetworkTopologyMode is how strictly a job keeps to its network tier.
// +kubebuilder:validation:Enum=hard;soft
type NetworkTopologyMode string

// Iteration says whether a dependent task waits for any or all of the
// tasks it depends on.
type Iteration string

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=jobs,scope=Namespaced,shortName={vcjob,vj}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.state.phase`
// +kubebuilder:printcolumn:name="minAvailable",type=integer,JSONPath=`.status.minAvailable`
// +kubebuilder:printcolumn:name="RUNNINGS",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="QUEUE",type=string,priority=1,JSONPath=`.spec.queue`

// Job is a Volcano batch job: tasks of pods that are scheduled together.
// Volcano's job controller creates its PodGroup and pods and writes its
// status; users change its lifecycle with Commands (AbortJob, ResumeJob,
// RestartJob, TerminateJob).
type Job struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the job runs and how.
	// +optional
	Spec JobSpec `json:"spec,omitempty"`
	// Status is maintained by the job controller.
	// +optional
	Status JobStatus `json:"status,omitempty,omitzero"`
}

// JobSpec is the desired shape of a job.
type JobSpec struct {
	// SchedulerName is the scheduler of the job's pods, unless a task's
	// template names another.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// MinAvailable is how many pods must be able to run together for the
	// job to start; by default all of them.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinAvailable int32 `json:"minAvailable,omitempty"`
	// Volumes are mounted into every pod of the job.
	// +optional
	Volumes []VolumeSpec `json:"volumes,omitempty"`
	// Tasks are the groups of identical pods the job runs.
	// +kubebuilder:validation:MinItems=1
	// +optional
	Tasks []TaskSpec `json:"tasks,omitempty"`
	// Policies are the job's default lifecycle policies.
	// +optional
	Policies []LifecyclePolicy `json:"policies,omitempty"`
	// Plugins enable job controller plugins (svc, ssh, env, ...), each
	// with its arguments.
	// +optional
	Plugins map[string][]string `json:"plugins,omitempty"`
	// RunningEstimate is how long the user expects the job to run.
	// +optional
	RunningEstimate *metav1.Duration `json:"runningEstimate,omitempty"`
	// Queue is the queue the job is scheduled from.
	// +kubebuilder:default:="default"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Queue string `json:"queue,omitempty"`
	// MaxRetry is how often the job is restarted before it is Failed.
	// +kubebuilder:default:=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRetry int32 `json:"maxRetry,omitempty"`
	// TTLSecondsAfterFinished deletes a finished job after that many seconds.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// PriorityClassName is the priority class of the job.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// MinSuccess is how many pods must succeed for the job to complete.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinSuccess *int32 `json:"minSuccess,omitempty"`
	// NetworkTopology constrains where the job's pods may be placed.
	// +optional
	NetworkTopology *NetworkTopologySpec `json:"networkTopology,omitempty"`
}

// NetworkTopologySpec constrains the network tiers a job may span.
type NetworkTopologySpec struct {
	// Mode is hard or soft.
	// +kubebuilder:default=hard
	// +optional
	Mode NetworkTopologyMode `json:"mode,omitempty"`
	// HighestTierAllowed is the highest tier the job may span.
	// +kubebuilder:validation:Minimum=0
	// +optional
	HighestTierAllowed *int `json:"highestTierAllowed,omitempty"`
	// HighestTierName names the highest tier the job may span.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	HighestTierName string `json:"highestTierName,omitempty"`
}

// VolumeSpec is a volume mounted into every pod of a job.
type VolumeSpec struct {
	// MountPath is where the volume is mounted; it may not contain ':'.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[^:]+$`
	MountPath string `json:"mountPath"`
	// VolumeClaimName is an existing PersistentVolumeClaim to mount.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	VolumeClaimName string `json:"volumeClaimName,omitempty"`
	// VolumeClaim is the spec of a claim the controller creates.
	// +optional
	VolumeClaim *corev1.PersistentVolumeClaimSpec `json:"volumeClaim,omitempty"`
}

// LifecyclePolicy says what the controller does (Action) when something
// happens (Event, Events or ExitCode).
type LifecyclePolicy struct {
	// Action is a job action such as RestartJob or AbortJob.
	// +optional
	Action string `json:"action,omitempty"`
	// Event triggers the action.
	// +optional
	Event Event `json:"event,omitempty"`
	// Events trigger the action.
	// +optional
	Events []Event `json:"events,omitempty"`
	// ExitCode of a container triggers the action.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Timeout delays the action.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// TaskSpec is one group of identical pods of a job.
type TaskSpec struct {
	// Name of the task, unique in the job.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Name string `json:"name,omitempty"`
	// Replicas is the number of pods of the task.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// MinAvailable is how many of the task's pods must run; by default all.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinAvailable *int32 `json:"minAvailable,omitempty"`
	// Template is the pod each replica is made from.
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
	// Policies are the task's lifecycle policies.
	// +optional
	Policies []LifecyclePolicy `json:"policies,omitempty"`
	// TopologyPolicy is the NUMA policy of the task's pods.
	// +optional
	TopologyPolicy NumaPolicy `json:"topologyPolicy,omitempty"`
	// MaxRetry is how often the task is restarted before it is Failed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRetry int32 `json:"maxRetry,omitempty"`
	// DependsOn names the tasks that must start first.
	// +optional
	DependsOn *DependsOn `json:"dependsOn,omitempty"`
	// PartitionPolicy splits the task's pods into partitions.
	// +optional
	PartitionPolicy *PartitionPolicySpec `json:"partitionPolicy,omitempty"`
}

// PartitionPolicySpec splits a task's pods into equal partitions.
type PartitionPolicySpec struct {
	// TotalPartitions is the number of partitions.
	// +kubebuilder:validation:Minimum=1
	TotalPartitions int32 `json:"totalPartitions"`
	// PartitionSize is the number of pods per partition.
	// +kubebuilder:validation:Minimum=1
	PartitionSize int32 `json:"partitionSize"`
	// NetworkTopology constrains each partition.
	// +optional
	NetworkTopology *NetworkTopologySpec `json:"networkTopology,omitempty"`
	// MinPartitions is the fewest partitions the task may run with.
	// +kubebuilder:default:=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinPartitions int32 `json:"minPartitions,omitempty"`
}

// DependsOn names the tasks a task waits for.
type DependsOn struct {
	// Name lists the tasks.
	// +optional
	Name []string `json:"name,omitempty"`
	// Iteration is "any" or "all".
	// +optional
	Iteration Iteration `json:"iteration,omitempty"`
}

// JobState is the phase of a job and why it is there.
type JobState struct {
	// Phase is where the job is in its lifecycle.
	// +kubebuilder:validation:Enum=Pending;Aborting;Aborted;Running;Restarting;Completing;Completed;Terminating;Terminated;Failed
	// +optional
	Phase JobPhase `json:"phase,omitempty"`
	// Reason is a one-word reason for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the last transition.
	// +optional
	Message string `json:"message,omitempty"`
	// LastTransitionTime is when the phase last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty,omitzero"`
}

// TaskState counts a task's pods by pod phase.
type TaskState struct {
	// Phase maps a pod phase to the number of the task's pods in it.
	// +optional
	Phase map[corev1.PodPhase]int32 `json:"phase,omitempty"`
}

// JobStatus is the observed state of a job.
type JobStatus struct {
	// State is the job's phase.
	// +optional
	State JobState `json:"state,omitempty,omitzero"`
	// MinAvailable is the minAvailable the controller works with.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinAvailable int32 `json:"minAvailable,omitempty"`
	// TaskStatusCount counts pods by phase for each task.
	// +optional
	TaskStatusCount map[string]TaskState `json:"taskStatusCount,omitempty"`
	// Pending is the number of pending pods.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Pending int32 `json:"pending,omitempty"`
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
	// Terminating is the number of pods being deleted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Terminating int32 `json:"terminating,omitempty"`
	// Unknown is the number of pods in an unknown phase.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Unknown int32 `json:"unknown,omitempty"`
	// Version counts the job's spec changes the controller has applied.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Version int32 `json:"version,omitempty"`
	// RetryCount is how often the job was restarted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RetryCount int32 `json:"retryCount,omitempty"`
	// RunningDuration is how long the job ran until it finished.
	// +optional
	RunningDuration *metav1.Duration `json:"runningDuration,omitempty"`
	// ControlledResources are the objects the job's plugins made
	// (Services, ConfigMaps, ...).
	// +optional
	ControlledResources map[string]string `json:"controlledResources,omitempty"`
	// Conditions record the phases the job went through.
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty"`
}

// JobCondition records that the job entered a phase.
type JobCondition struct {
	// Status is the phase the job entered.
	Status JobPhase `json:"status"`
	// LastTransitionTime is when it entered it.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// JobList is a list of jobs.
type JobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Job `json:"items"`
}
