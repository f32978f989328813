package eventhandler

import "k8s.io/client-go/tools/cache"

// ControllerRevision: a revision created, changed or deleted syncs the
// NodeSet it belongs to (its history, history.go in the controller).
func ControllerRevision(q Queue) cache.ResourceEventHandler { return ownerHandler(q) }
