package eventhandler

import "k8s.io/client-go/tools/cache"

// Service: a deleted Service of a NodeSet syncs it, which puts the Service
// back. The informer holds serve's own Services only.
func Service(q Queue) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { enqueueOwner(q, obj) }}
}
