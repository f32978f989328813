package podgroup

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// kind says what a request is about. Pods, their owners and queues go
// through the same work queue so that retries, rate limiting and the
// one-worker-per-key guarantee apply to all.
type kind uint8

const (
	podKind kind = iota
	// The owner kinds; what differs between them is in ownerKinds.
	replicaSetKind
	statefulSetKind
	jobKind
	daemonSetKind
	// queueKind asks for the ungrouped pods of a queue that opened.
	queueKind
)

// String is the kind's name in logs and in the dropped-requests metric.
func (k kind) String() string {
	if o := ownerKindOf(k); o != nil {
		return o.gvk.Kind
	}
	if k == queueKind {
		return "Queue"
	}
	return "Pod"
}

// request is a work queue key. It names the object, never carries it: the
// worker reads the newest copy from the cache.
type request struct {
	kind      kind
	namespace string
	name      string
}

// objectOf is the object a request's events are recorded on (a dropped
// request, a group its queue refused); nil for a queue, or when the object
// is gone from the cache.
func (c *Controller) objectOf(req request) runtime.Object {
	if o := ownerKindOf(req.kind); o != nil {
		if v, err := c.cachedOwner(o, req.namespace, req.name); err == nil && v != nil {
			return v.obj
		}
		return nil
	}
	if req.kind != podKind {
		return nil
	}
	pod, err := c.pods.Pods(req.namespace).Get(req.name)
	if err != nil {
		return nil
	}
	return pod
}
