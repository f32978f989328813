// Package analysis is the pure half of 'kubectl vc why': given a Snapshot
// of the objects that decide a job's, podgroup's, pod's or queue's fate,
// read once, it returns the Reasons the object does not run, blocking ones
// first, and what was checked and found fine. It reads nothing itself, so
// every rule is tested with plain objects.
package analysis

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/joborder"
)

// Kind is what 'why' is asked about.
type Kind string

const (
	Job      Kind = "job"
	PodGroup Kind = "podgroup"
	Pod      Kind = "pod"
	Queue    Kind = "queue"
)

// Kinds lists the kinds 'why' knows, in the order help shows them.
var Kinds = []Kind{Job, PodGroup, Pod, Queue}

// Code is the stable identifier of a reason, for scripts: it never changes
// once released, whatever the message says.
type Code string

// The reasons. Each is documented in docs/why.md with its evidence and fix.
const (
	// SchedulerUnknown: the pods name a scheduler nothing in the cluster
	// answers to (a typo such as "vocalno").
	SchedulerUnknown Code = "SchedulerUnknown"
	// SchedulerNotRunning: the pods name Volcano's scheduler, but it holds
	// no fresh leader Lease and has written no recent event.
	SchedulerNotRunning Code = "SchedulerNotRunning"
	// PodGroupMissing: the PodGroup the pod names, or the job's, does not exist.
	PodGroupMissing Code = "PodGroupMissing"
	// PodGroupInOtherNamespace: the PodGroup the pod names exists, but only
	// in another namespace; a pod's group is always in its own namespace.
	PodGroupInOtherNamespace Code = "PodGroupInOtherNamespace"
	// PodGroupControllerNotRunning: the PodGroup is made by a controller
	// (serve's or Volcano's podgroup controller, Volcano's job controller)
	// and none that would make it runs.
	PodGroupControllerNotRunning Code = "PodGroupControllerNotRunning"
	// NotEnoughPods: minMember is larger than the pods that exist.
	NotEnoughPods Code = "NotEnoughPods"
	// QueueMissing: the queue does not exist.
	QueueMissing Code = "QueueMissing"
	// QueueClosed: the queue is Closed or Closing.
	QueueClosed Code = "QueueClosed"
	// ParentQueueClosed: a queue above it is Closed or Closing.
	ParentQueueClosed Code = "ParentQueueClosed"
	// QueueNotLeaf: the queue has child queues; work runs in leaf queues only.
	QueueNotLeaf Code = "QueueNotLeaf"
	// QueueCapabilityReached: allocated (plus what waits Inqueue) plus what
	// the group needs is over the queue's capability, per resource.
	QueueCapabilityReached Code = "QueueCapabilityReached"
	// ParentCapabilityReached: the same for a queue above it.
	ParentCapabilityReached Code = "ParentCapabilityReached"
	// QueueOverDeserved: the queue has more than its deserved share while
	// other queues wait.
	QueueOverDeserved Code = "QueueOverDeserved"
	// MinResourcesOverCapability: the group's minResources is larger than
	// the capability of its queue or a queue above it: it can never run there.
	MinResourcesOverCapability Code = "MinResourcesOverCapability"
	// MinResourcesOverCluster: the group's minResources is larger than what
	// every Ready, schedulable node together can offer.
	MinResourcesOverCluster Code = "MinResourcesOverCluster"
	// StalePodGroups: Completed or finished podgroups still counted against
	// the queue.
	StalePodGroups Code = "StalePodGroups"
	// Unschedulable: the scheduler's own condition on the PodGroup, with
	// the gang arithmetic.
	Unschedulable Code = "Unschedulable"
	// PodGroupsWaiting: (why queue) podgroups of the queue wait, quoted
	// with the scheduler's condition on each.
	PodGroupsWaiting Code = "PodGroupsWaiting"
	// SchedulerEvents: the scheduler's latest events, when no condition says more.
	SchedulerEvents Code = "SchedulerEvents"
	// NotChecked: something could not be read (RBAC); what depends on it
	// is not known.
	NotChecked Code = "NotChecked"
	// Evicted: (note) Volcano's scheduler evicted a pod of the object:
	// the action, when, on which node, and for whom (inferred).
	Evicted Code = "Evicted"
	// EvictionPolicy: (note) for a Volcano Job, the lifecycle policy the
	// eviction fired (PodEvicted -> action), the retry count against
	// maxRetry, and what the job controller did.
	EvictionPolicy Code = "EvictionPolicy"
)

// Reason is one finding that keeps (or, when Blocking is false, may keep)
// the object from running.
type Reason struct {
	Reason   Code `json:"reason"`
	Blocking bool `json:"blocking"`
	// Object is what the reason is about: queue/NAME, podgroup/NS/NAME, pod/NS/NAME, ...
	Object  string `json:"object,omitempty"`
	Message string `json:"message"`
	// Evidence are the facts as read, each naming its object and field.
	Evidence []string `json:"evidence,omitempty"`
	// Resources are the numbers of a capacity reason, per resource.
	Resources []ResourceUse `json:"resources,omitempty"`
	// Gang is the arithmetic of a gang the scheduler cannot place.
	Gang *Gang `json:"gang,omitempty"`
	// Eviction is the eviction an Evicted reason tells.
	Eviction *infer.Eviction `json:"eviction,omitempty"`
	Fix      string          `json:"fix,omitempty"`
}

// ResourceUse is the arithmetic of one resource of a capacity reason:
// Used + Needed against Limit.
type ResourceUse struct {
	Resource string `json:"resource"`
	// Needed is what the group needs of it (minResources, or its pods' requests).
	Needed string `json:"needed,omitempty"`
	// Used is what the queue already holds: status.allocated, plus the
	// minResources of podgroups waiting Inqueue when Inqueue is set.
	Used      string `json:"used,omitempty"`
	Allocated string `json:"allocated,omitempty"`
	Inqueue   string `json:"inqueue,omitempty"`
	// Limit is the capability, deserved share or cluster total.
	Limit string `json:"limit"`
}

// Gang is what the scheduler said of a gang: MinMember pods must be placed
// at once, Placeable of them can be, Pods exist.
type Gang struct {
	MinMember   int32 `json:"minMember"`
	Pods        int32 `json:"pods"`
	Placeable   int32 `json:"placeable"`
	Unplaceable int32 `json:"unplaceable"`
}

// Check is one thing looked at and found fine.
type Check struct {
	Check   string `json:"check"`
	Message string `json:"message"`
}

// Report is the result of the analysis: what -o json|yaml prints.
type Report struct {
	Kind      Kind   `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Status is the object's phase or state as read (Pending, Running, Open ...).
	Status string `json:"status"`
	// Blocked is true when a reason blocks it; the exit code is 1 then.
	Blocked bool     `json:"blocked"`
	Reasons []Reason `json:"reasons"`
	Checked []Check  `json:"checked"`
}

// Blocking returns the codes of the blocking reasons.
func (r Report) Blocking() []Code {
	var out []Code
	for _, x := range r.Reasons {
		if x.Blocking {
			out = append(out, x.Reason)
		}
	}
	return out
}

// Snapshot is every object the analysis reads, read once by the command.
type Snapshot struct {
	Kind      Kind
	Namespace string
	Name      string
	Now       time.Time

	// Job, Pod, PodGroup, QueueObj: the object asked about and the objects
	// it leads to; nil when missing.
	Job      *batchv1alpha1.Job
	Pod      *corev1.Pod
	PodGroup *schedulingv1beta1.PodGroup
	// GroupName is the PodGroup the pod names (its group-name annotation),
	// or the job's expected PodGroup, when PodGroup is nil.
	GroupName string
	// Pods are the members: of the job, of the group, or the pod's group
	// (the pod itself included).
	Pods []corev1.Pod
	// PodGroups are every podgroup of every namespace.
	PodGroups []schedulingv1beta1.PodGroup
	// Queues are every queue.
	Queues []schedulingv1beta1.Queue
	// Nodes are every node; NodesRead is false when they could not be
	// listed (Nodes is then empty and says nothing).
	Nodes     []corev1.Node
	NodesRead bool
	// AllPods are the pods of every namespace (what the nodes' pods
	// request: idle resources); AllPodsRead is false when they could not
	// be listed.
	AllPods     []corev1.Pod
	AllPodsRead bool
	// HyperNodes are Volcano's HyperNodes (the network topology);
	// HyperNodesRead is false when the kind is not served or could not be
	// listed.
	HyperNodes     []topologyv1alpha1.HyperNode
	HyperNodesRead bool
	// SchedulerConfig is the scheduler's configuration (actions, plugins),
	// nil when not read.
	SchedulerConfig *joborder.Config
	// Events are the events of the objects above (job, group, pods, queue).
	Events []corev1.Event
	// Commands are the Commands that target queues (pending: applied ones
	// are deleted).
	Commands []busv1alpha1.Command

	// VolcanoSchedulers are the names Volcano's scheduler answers to.
	VolcanoSchedulers []string
	// Schedulers is what was seen of each scheduler name the pods use and
	// of each known scheduler (for suggestions).
	Schedulers map[string]SchedulerSeen
	// ServeLease and VolcanoControllerLease are the leader Leases of
	// serve and of Volcano's controller manager; nil when absent.
	ServeLease             *coordinationv1.Lease
	VolcanoControllerLease *coordinationv1.Lease
	// ControllersNamespace is where those Leases live.
	ControllersNamespace string

	// Unreadable lists what could not be read, with why.
	Unreadable []Unreadable

	// Evictions are the evictions Volcano's scheduler made in the
	// namespace (package infer); the analysis keeps the object's own.
	Evictions []infer.Eviction
}

// SchedulerSeen is the evidence that a scheduler of some name runs.
type SchedulerSeen struct {
	// Lease is its leader Lease, when it has one.
	Lease *coordinationv1.Lease
	// LeaseName is namespace/name of the Lease looked for.
	LeaseName string
	// LastEvent is the time of its latest event, zero when none was seen.
	LastEvent time.Time
	// BoundPod names a pod it placed on a node, empty when none was seen.
	BoundPod string
	// Probed is set when its events and placed pods were looked for
	// (LastEvent and BoundPod mean something); a scheduler with a fresh
	// Lease is not probed.
	Probed bool
}

// Unreadable is something the command could not read.
type Unreadable struct {
	What  string
	Error string
}
