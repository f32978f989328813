package keys

// The names serve and install give their own objects, and the namespace
// Volcano's components run in. They are spelled here only: make verify
// refuses the literals anywhere else in the product code.
const (
	// ServeName names serve's Deployment, ServiceAccount, leader-election
	// Lease, metrics Service and certificate, and its component in events.
	ServeName = "kubectl-vc-serve"

	// LabelManagedBy, set to ServeName, marks the objects the NodeSet
	// controller makes (ssh ConfigMaps, Services, PodDisruptionBudgets,
	// pods): serve's informers of those kinds select it, so that the
	// objects of others never reach its caches (docs/security.md). Not
	// app.kubernetes.io/managed-by: a NodeSet's objects carry the
	// NodeSet's own labels, as Slinky's operator's do, and Slinky's chart
	// sets that one to Helm.
	LabelManagedBy = "kubectl-vc.io/managed-by"

	// VolcanoNamespace is where Volcano installs its scheduler and
	// controllers (their Leases live there), and where install puts serve
	// unless told otherwise.
	VolcanoNamespace = "volcano-system"

	// VolcanoScheduler is the name Volcano's scheduler answers to unless
	// configured otherwise: the scheduler of a Job made from flags, of the
	// pods the podgroup controller groups, and the leader Lease why reads.
	VolcanoScheduler = "volcano"
)
