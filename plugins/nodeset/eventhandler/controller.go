package eventhandler

import (
	"k8s.io/client-go/tools/cache"

	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
)

// Controller: a Slinky Controller that comes, changes or goes may change
// how every NodeSet of its namespace reaches Slurm (and shapes their pods),
// so each of them syncs.
func Controller(q Queue, nodeSets slinkylisters.NodeSetLister) cache.ResourceEventHandler {
	return namespaceHandler(q, nodeSets)
}
