package keys

// The names serve and install give their own objects, and the namespace
// Volcano's components run in. They are spelled here only: make verify
// refuses the literals anywhere else in the product code.
const (
	// ServeName names serve's Deployment, ServiceAccount, leader-election
	// Lease, metrics Service and certificate, and its component in events.
	ServeName = "kubectl-vc-serve"

	// VolcanoNamespace is where Volcano installs its scheduler and
	// controllers (their Leases live there), and where install puts serve
	// unless told otherwise.
	VolcanoNamespace = "volcano-system"

	// VolcanoScheduler is the name Volcano's scheduler answers to unless
	// configured otherwise: the scheduler of a Job made from flags, of the
	// pods the podgroup controller groups, and the leader Lease why reads.
	VolcanoScheduler = "volcano"
)
