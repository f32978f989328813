package eventhandler

import "k8s.io/client-go/tools/cache"

// PodDisruptionBudget: a deleted PDB of a NodeSet syncs it, which puts the
// PDB back. The informer holds serve's own PDBs only.
func PodDisruptionBudget(q Queue) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { enqueueOwner(q, obj) }}
}
