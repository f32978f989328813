package leases

import "github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"

// The leader-election Leases of the two controller managers that act on
// queues, named once for doctor and why, which both judge them. Both live
// in the controllers' namespace (keys.VolcanoNamespace unless told).
const (
	// Serve is the Lease 'kubectl vc serve' holds while it leads.
	Serve = keys.ServeName
	// VolcanoControllers is the Lease of Volcano's controller manager
	// (vc-controller-manager's leader election).
	VolcanoControllers = "vc-controller-manager"
)
