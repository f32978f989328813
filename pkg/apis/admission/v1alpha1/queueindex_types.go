package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The QueueIndexes there are, one per kind of request, so that each
// request's policy reads the smallest object it can: the API server turns
// the whole param into a CEL value for every evaluation, so a request pays
// for the size of the index it reads (docs/admission.md). install creates
// them empty; serve's queueindex controller fills them. Queue creates and
// changes of a parent or a resource list read none: serve's queue webhook
// answers them from its cache.
const (
	// QueueIndexStates holds the queues that are not Open: PodGroup
	// creation reads it.
	QueueIndexStates = "states"
	// QueueIndexJobs holds the queues that are not Open and the parents'
	// child counts, so that a Job create (an Open leaf queue only) checks
	// both rules in one evaluation.
	QueueIndexJobs = "jobs"
	// QueueIndexChildren holds the parents' child counts only, so that a
	// queue delete reads an index that grows with the parents, not with
	// the closed queues (a delete through serve's webhook cost half as
	// much again as one without; docs/admission.md).
	QueueIndexChildren = "children"
)

// QueueIndexNames are the QueueIndexes, in the order serve writes them.
var QueueIndexNames = []string{QueueIndexStates, QueueIndexJobs, QueueIndexChildren}

// QueueIndexLegacyNames are the QueueIndexes of earlier releases: queue
// creates and changes of a parent or a resource list read "hierarchy"
// before serve's webhook answered them. install deletes it, doctor names
// it, serve writes it no more.
var QueueIndexLegacyNames = []string{"hierarchy"}

// QueueIndex is what the admission policies need to know of other queues,
// in one object, so that a PodGroup or Job create is checked with
// one lookup instead of one evaluation per Queue. It is kept by serve
// (the queueindex controller), which also stamps RefreshedAt at least every
// --queueindex-refresh: a create is refused when the index it reads was
// last refreshed more than QueueIndexMaxAge before the object's own
// creationTimestamp, so that an index nobody keeps any more is never
// trusted for long (docs/admission.md).
//
// +genclient
// +genclient:nonNamespaced
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=queueindexes,scope=Cluster,shortName=qidx
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type QueueIndex struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec QueueIndexSpec `json:"spec,omitempty"`
}

// QueueIndexSpec holds the entries.
type QueueIndexSpec struct {
	// Entries holds, for each queue name that is worth one, what the
	// policies need of it, as one text: ";name:line;name:line;", sorted by
	// name (the encoding is in package rules, QueueIndexText;
	// docs/admission.md). Which names have an entry depends on the index:
	// the queues that are not Open (states), and those and the names
	// queues have as their parent, with how many (jobs). One string rather than an object per entry
	// because the API server converts the whole param for every
	// evaluation: one string converts at the speed of a copy, a map at
	// about a microsecond per entry; the policies find their entry with
	// split().
	// +optional
	Entries string `json:"entries,omitempty"`
	// RefreshedAt is when the writer last confirmed that Entries matches
	// every queue it knows of. The policies compare it with the API
	// server's clock as a create's metadata.creationTimestamp shows it.
	// +optional
	RefreshedAt *metav1.Time `json:"refreshedAt,omitempty"`
}

// QueueIndexMaxAge is how long before a create's creationTimestamp the
// index it reads must have been refreshed: the policies (package
// manifests, policies/*-index.yaml) hold the same duration, and a test
// keeps the two equal. Serve refreshes well within it.
const QueueIndexMaxAge = 60 * time.Second

// QueueIndexEntry is what admission knows of one queue name, before it is
// written as an entry's line (rules.QueueIndexLine).
type QueueIndexEntry struct {
	// State is the queue's status.state when it is not Open (Closing,
	// Closed, Unknown); empty means Open.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	State string `json:"state,omitempty"`
	// Children is how many queues name this one as their parent.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Children int32 `json:"children,omitempty"`
	// Child is one of the children, the first by name, for the policies'
	// messages.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Child string `json:"child,omitempty"`
}

// QueueIndexList is a list of QueueIndex.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type QueueIndexList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QueueIndex `json:"items"`
}
