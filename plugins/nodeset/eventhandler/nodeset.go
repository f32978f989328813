package eventhandler

import "k8s.io/client-go/tools/cache"

// NodeSet: a NodeSet created, changed or deleted syncs itself (a deleted
// one to forget what the controller kept for it).
func NodeSet(q Queue) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			q.Add(key)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, cur any) { enqueue(cur) },
		DeleteFunc: enqueue,
	}
}
