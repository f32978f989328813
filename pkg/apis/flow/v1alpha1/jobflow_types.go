package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
)

// Keys Volcano's jobflow controller puts on the Jobs it makes, both as
// labels and as annotations. Their values are "<namespace>.<name>" of the
// JobFlow and of the step's JobTemplate. They are part of the wire
// contract: 'job list --flow' and 'jobflow describe' find a flow's jobs
// with them, and Volcano's jobtemplate controller a template's.
const (
	// CreatedByJobFlowKey names the JobFlow a Job was made for.
	CreatedByJobFlowKey = "volcano.sh/createdByJobFlow"
	// CreatedByJobTemplateKey names the JobTemplate a Job was made from.
	CreatedByJobTemplateKey = "volcano.sh/createdByJobTemplate"
)

// ObjectString is the value of CreatedByJobFlowKey and
// CreatedByJobTemplateKey for the object ns/name.
func ObjectString(ns, name string) string { return ns + "." + name }

// JobName is the name of the Job Volcano's jobflow controller makes for
// the step (JobTemplate) template of flow.
func JobName(flow, template string) string { return flow + "-" + template }

// Phase is where a JobFlow is, as Volcano's jobflow controller writes it.
// +kubebuilder:validation:Enum=Succeed;Terminating;Failed;Running;Pending
type Phase string

// The phases of a JobFlow.
const (
	// Succeed: every step's job Completed.
	Succeed Phase = "Succeed"
	// Terminating: the flow is being deleted.
	Terminating Phase = "Terminating"
	// Failed: a step's job Failed or was Terminated.
	Failed Phase = "Failed"
	// Running: at least one step's job was made.
	Running Phase = "Running"
	// Pending: no step's job was made yet.
	Pending Phase = "Pending"
)

// RetainPolicy says what becomes of a flow's jobs once it has succeeded.
// +kubebuilder:validation:Enum=retain;delete
type RetainPolicy string

const (
	// Retain keeps the jobs.
	Retain RetainPolicy = "retain"
	// Delete deletes them.
	Delete RetainPolicy = "delete"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=jobflows,scope=Namespaced,shortName=jf
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.state.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// JobFlow runs JobTemplates of its namespace as Volcano Jobs, each step
// once the steps it depends on have completed.
type JobFlow struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   JobFlowSpec   `json:"spec,omitempty"`
	Status JobFlowStatus `json:"status,omitempty"`
}

// JobFlowSpec is the flow's steps and what becomes of their jobs.
type JobFlowSpec struct {
	// Flows are the steps, each naming a JobTemplate.
	// +optional
	Flows []Flow `json:"flows,omitempty"`
	// JobRetainPolicy: retain (default) or delete the jobs once the flow
	// has succeeded.
	// +optional
	JobRetainPolicy RetainPolicy `json:"jobRetainPolicy,omitempty"`
}

// Flow is one step: the JobTemplate of that name, and what it waits for.
type Flow struct {
	// Name is the JobTemplate the step runs.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// DependsOn lists the steps that must complete first.
	// +optional
	DependsOn *DependsOn `json:"dependsOn,omitempty"`
	// Patch changes the template's job spec for this step.
	// +optional
	Patch *Patch `json:"patch,omitempty"`
}

// DependsOn is what a step waits for.
type DependsOn struct {
	// Targets are the names of the steps whose jobs must be Completed.
	// +optional
	Targets []string `json:"targets,omitempty"`
	// Probe describes further checks on the targets (HTTP, TCP, task
	// phase); Volcano's jobflow controller waits on Targets.
	// +optional
	Probe *Probe `json:"probe,omitempty"`
}

// Patch is a partial job spec laid over the step's template.
type Patch struct {
	// +optional
	JobSpec batchv1alpha1.JobSpec `json:"jobSpec,omitempty"`
}

// Probe lists checks on the tasks of the steps depended on.
type Probe struct {
	// +optional
	HTTPGetList []HTTPGet `json:"httpGetList,omitempty"`
	// +optional
	TCPSocketList []TCPSocket `json:"tcpSocketList,omitempty"`
	// +optional
	TaskStatusList []TaskStatus `json:"taskStatusList,omitempty"`
}

// HTTPGet checks a task by an HTTP GET.
type HTTPGet struct {
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TaskName string `json:"taskName,omitempty"`
	// +optional
	Path string `json:"path,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int `json:"port,omitempty"`
	// +optional
	HTTPHeader corev1.HTTPHeader `json:"httpHeader,omitempty"`
}

// TCPSocket checks a task by opening a TCP connection.
type TCPSocket struct {
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TaskName string `json:"taskName,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int `json:"port"`
}

// TaskStatus checks that a task reached a phase.
type TaskStatus struct {
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TaskName string `json:"taskName,omitempty"`
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Phase string `json:"phase,omitempty"`
}

// JobFlowStatus is what Volcano's jobflow controller observed of the
// flow's jobs.
type JobFlowStatus struct {
	// Names of the flow's jobs by job phase.
	// +optional
	PendingJobs []string `json:"pendingJobs,omitempty"`
	// +optional
	RunningJobs []string `json:"runningJobs,omitempty"`
	// +optional
	FailedJobs []string `json:"failedJobs,omitempty"`
	// +optional
	CompletedJobs []string `json:"completedJobs,omitempty"`
	// +optional
	TerminatedJobs []string `json:"terminatedJobs,omitempty"`
	// UnKnowJobs are jobs in any other phase (Volcano's spelling).
	// +optional
	UnKnowJobs []string `json:"unKnowJobs,omitempty"`
	// JobStatusList has one entry per job made, with its phase history.
	// +optional
	JobStatusList []JobStatus `json:"jobStatusList,omitempty"`
	// Conditions are keyed by job name.
	// +optional
	Conditions map[string]Condition `json:"conditions,omitempty"`
	// State is the flow's phase.
	// +optional
	State State `json:"state,omitempty"`
}

// JobStatus is one job of the flow.
type JobStatus struct {
	// +optional
	Name string `json:"name,omitempty"`
	// +optional
	State batchv1alpha1.JobPhase `json:"state,omitempty"`
	// +optional
	StartTimestamp metav1.Time `json:"startTimestamp,omitempty"`
	// +optional
	EndTimestamp metav1.Time `json:"endTimestamp,omitempty"`
	// +kubebuilder:validation:Minimum=0
	// +optional
	RestartCount int32 `json:"restartCount,omitempty"`
	// +optional
	RunningHistories []JobRunningHistory `json:"runningHistories,omitempty"`
}

// JobRunningHistory is one phase a job was in, and when.
type JobRunningHistory struct {
	// +optional
	StartTimestamp metav1.Time `json:"startTimestamp,omitempty"`
	// +optional
	EndTimestamp metav1.Time `json:"endTimestamp,omitempty"`
	// +optional
	State batchv1alpha1.JobPhase `json:"state,omitempty"`
}

// State holds the flow's phase.
type State struct {
	// +optional
	Phase Phase `json:"phase,omitempty"`
}

// Condition is a job of the flow as last observed.
type Condition struct {
	Phase           batchv1alpha1.JobPhase             `json:"phase,omitempty"`
	CreateTimestamp metav1.Time                        `json:"createTime,omitempty"`
	RunningDuration *metav1.Duration                   `json:"runningDuration,omitempty"`
	TaskStatusCount map[string]batchv1alpha1.TaskState `json:"taskStatusCount,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// JobFlowList is a list of JobFlows.
type JobFlowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []JobFlow `json:"items"`
}

// CreatedBy is the name of the object of the same namespace that obj's
// label key (CreatedByJobFlowKey or CreatedByJobTemplateKey) names, or ""
// when it names none there.
func CreatedBy(obj metav1.Object, key string) string {
	v, ns := obj.GetLabels()[key], obj.GetNamespace()+"."
	if len(v) > len(ns) && v[:len(ns)] == ns {
		return v[len(ns):]
	}
	return ""
}
