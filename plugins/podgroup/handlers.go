package podgroup

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The informer event handlers. They only filter and enqueue: the worker
// reads the newest copy of the object and decides.

// addPod filters early, so that pods of other schedulers and pods that
// already have a group (a Volcano Job's, say) cost nothing more; the worker
// checks again against the newest copy.
//
// A new pod of a revisioned owner (a StatefulSet) also brings its owner's
// group up to date: it may be the first pod of a new update revision in
// our cache, after the owner's own events (status.updateRevision) have all
// been handled without it, and then nothing else would rebuild the group
// from the new template.
func (c *Controller) addPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !c.wants(&pod.Spec) || pod.Annotations[keys.KubeGroupName] != "" {
		return
	}
	c.wq.Add(request{kind: podKind, namespace: pod.Namespace, name: pod.Name})
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if o := ownerKindOfRef(ref); o != nil && o.revisioned && o.path(c) {
			c.wq.Add(request{kind: o.kind, namespace: pod.Namespace, name: ref.Name})
		}
	}
}

// ownerHandler is the event handler of an owner kind with a path of its
// own. Deletes need nothing: the group goes with its owner (garbage
// collector).
func (c *Controller) ownerHandler(o *ownerKind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.addOwner(o, obj) },
		UpdateFunc: func(old, cur any) { c.updateOwner(o, old, cur) },
	}
}

// addOwner enqueues an owner whose pod template uses one of our
// schedulers; other owners never had a group from us.
func (c *Controller) addOwner(o *ownerKind, obj any) {
	v := o.view(obj)
	if v == nil || !c.wants(v.template) {
		return
	}
	c.wq.Add(request{kind: o.kind, namespace: v.obj.GetNamespace(), name: v.obj.GetName()})
}

// updateOwner treats an update like an add, as Volcano does: during a
// rolling update the add of a ReplicaSet may be seen at replicas 0 and the
// scale-up only as an update. Resyncs (same resourceVersion) are skipped.
func (c *Controller) updateOwner(o *ownerKind, old, cur any) {
	ov, ok1 := old.(interface{ GetResourceVersion() string })
	nv, ok2 := cur.(interface{ GetResourceVersion() string })
	if ok1 && ok2 && ov.GetResourceVersion() == nv.GetResourceVersion() {
		return
	}
	c.addOwner(o, cur)
}

// addQueue asks for the ungrouped pods of a queue that appears Open or
// goes away (a queue that does not exist refuses nothing).
func (c *Controller) addQueue(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if q, ok := obj.(*v1beta1.Queue); ok {
		c.wq.Add(request{kind: queueKind, name: q.Name})
	}
}

// updateQueue asks for the ungrouped pods of a queue that has just opened.
func (c *Controller) updateQueue(old, cur any) {
	o, ok1 := old.(*v1beta1.Queue)
	n, ok2 := cur.(*v1beta1.Queue)
	if ok1 && ok2 && !isOpen(o) && isOpen(n) {
		c.wq.Add(request{kind: queueKind, name: n.Name})
	}
}
