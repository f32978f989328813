package podgroup

import (
	"context"
	"errors"
)

// sync is the work loop's Sync: one request, by kind, to the pod path
// (pod.go), the owner path (owner.go) or a queue that opened (parking.go).
// A group refused because of its queue's state parks the request instead
// of failing it.
func (c *Controller) sync(ctx context.Context, req request) error {
	var err error
	if o := ownerKindOf(req.kind); o != nil {
		err = c.syncOwner(ctx, o, req.namespace, req.name)
	} else if req.kind == queueKind {
		err = c.syncQueue(req.name)
	} else {
		err = c.syncPod(ctx, req.namespace, req.name)
	}
	var refused *queueRefusedError
	if errors.As(err, &refused) {
		return c.waitForQueue(req, refused)
	}
	return err
}
