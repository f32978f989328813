package eventhandler

import (
	"k8s.io/client-go/tools/cache"

	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
)

// RestApi: a Slinky RestApi that comes, changes or goes may change which
// slurmrestd every NodeSet of its namespace reaches, so each of them syncs.
func RestApi(q Queue, nodeSets slinkylisters.NodeSetLister) cache.ResourceEventHandler {
	return namespaceHandler(q, nodeSets)
}
