// Package keys holds the annotation and label keys that Volcano, Kubernetes
// and Slinky give meaning to. They are part of the wire contract: a key here
// must be spelled exactly as the upstream controllers and schedulers read it.
package keys

const (
	// KubeGroupName names the PodGroup a pod belongs to. The scheduler and the
	// podgroup controller both read it; it is never overwritten once set.
	KubeGroupName = "scheduling.k8s.io/group-name"

	// GroupMinMember on a pod's owner sets the PodGroup's minMember.
	GroupMinMember = "scheduling.volcano.sh/group-min-member"
	// QueueName on a pod or its owner picks the queue of the PodGroup.
	QueueName = "scheduling.volcano.sh/queue-name"
	// VolcanoQueueName is the shorter queue annotation also honoured on pods.
	VolcanoQueueName = "volcano.sh/queue-name"

	// Preemptable marks a workload as preemptable.
	Preemptable = "volcano.sh/preemptable"
	// CooldownTime is the minimum time a preempted workload keeps its resources.
	CooldownTime = "volcano.sh/cooldown-time"
	// RevocableZone names the revocable zone a workload may run in.
	RevocableZone = "volcano.sh/revocable-zone"
	// JDBMinAvailable is the disruption budget's minimum available members.
	JDBMinAvailable = "volcano.sh/jdb-min-available"
	// JDBMaxUnavailable is the disruption budget's maximum unavailable members.
	// When both JDB keys are present, JDBMinAvailable wins.
	JDBMaxUnavailable = "volcano.sh/jdb-max-unavailable"

	// NetworkTopologyMode is "hard" (the default) or "soft".
	NetworkTopologyMode = "volcano.sh/network-topology-mode"
	// NetworkTopologyHighestTier is the highest network tier a group may span.
	NetworkTopologyHighestTier = "volcano.sh/network-topology-highest-tier"

	// ClosedByParent marks a queue that was closed because its parent was
	// closed, so that opening the parent re-opens exactly these children.
	ClosedByParent = "volcano.sh/closed-by-parent"

	// VolcanoAnnotationPrefix is the prefix of the owner annotations a
	// PodGroup inherits.
	VolcanoAnnotationPrefix = "volcano.sh/"
)

// Well-known queue names.
const (
	// RootQueue is the top of the queue hierarchy; it can never be closed or deleted.
	RootQueue = "root"
	// DefaultQueue receives work that names no queue; it cannot be deleted.
	DefaultQueue = "default"
)

// Field managers used for server-side apply.
const (
	// QueueControllerManager is the field manager of queue status, as Volcano's.
	QueueControllerManager = "queue-controller"
	// CLIManager is the field manager of objects the command line applies.
	CLIManager = "kubectl-vc"
)

// Admission's two ways of checking rules that need other queues
// (docs/admission.md).
const (
	// AdmissionMode labels the admission policies and bindings that belong
	// to one mode only; 'kubectl vc install' applies the objects of the
	// mode it chose and those without the label.
	AdmissionMode = "admission.kubectl-vc.io/mode"
	// AdmissionModeIndex reads serve's QueueIndexes: one lookup per
	// request, whatever the number of queues; needs serve's queueindex
	// controller running.
	AdmissionModeIndex = "index"
	// AdmissionModePerQueue evaluates each rule once per Queue: needs
	// nothing running, costs in proportion to the number of queues.
	AdmissionModePerQueue = "per-queue"
	// QueueWebhookConfigName is the ValidatingWebhookConfiguration of the
	// index mode: serve checks queue writes (the hierarchy rules and the
	// children of a deleted queue) with one lookup in its cache
	// (docs/admission.md).
	QueueWebhookConfigName = "vc-queue-hierarchy"
	// QueueWebhookName is the one webhook in it.
	QueueWebhookName = "queue-hierarchy.kubectl-vc.io"
	// QueueWebhookPath is where serve answers its AdmissionReviews.
	QueueWebhookPath = "/validate-queues"
	// QueueWebhookServiceName is the Service in serve's namespace the API
	// server calls the webhook through (port 443 to the pods' 9443).
	QueueWebhookServiceName = "kubectl-vc-serve-webhook"
	// QueueWebhookSecretName is the Secret in serve's namespace holding the
	// webhook's certificate (tls.crt, tls.key and ca.crt), made by install.
	QueueWebhookSecretName = "kubectl-vc-serve-webhook-tls"
	// QueueWebhookPort is the port serve's pods answer the webhook on.
	QueueWebhookPort = 9443
	// AdmissionIndexedLegacy is the label an earlier release put on
	// indexed queues; nothing reads it any more (doctor names it).
	AdmissionIndexedLegacy = "admission.kubectl-vc.io/indexed"
)
