// Package eventhandler maps the NodeSet controller's informer events to the
// NodeSets to sync: one file per watched kind, each a constructor of the
// cache.ResourceEventHandler that kind's informer is given. The handlers
// put keys ("namespace/name") on a Queue and tell the pod expectations
// what the informer showed; they read listers and never write, and they
// know nothing of the controller beyond those two small interfaces.
package eventhandler

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
)

// Queue takes the key of a NodeSet to sync: the controller's work queue
// satisfies it.
type Queue interface {
	Add(key string)
}

// Expectations is told of the pod creations and deletions the pod informer
// shows, so that a sync waiting on its own writes may go on.
type Expectations interface {
	CreationObserved(key string)
	DeletionObserved(key string, uid types.UID)
}

// OwnerKey is the key of the NodeSet controlling obj, or, for an orphan
// carrying the NodeSet worker labels, of the NodeSet it may be adopted by;
// "" for anything else.
func OwnerKey(obj metav1.Object) string {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		if ref.Kind != slinkyv1beta1.NodeSetKind.Kind || ref.APIVersion != slinkyv1beta1.SchemeGroupVersion.String() {
			return ""
		}
		return obj.GetNamespace() + "/" + ref.Name
	}
	l := obj.GetLabels()
	if l[slinkyv1beta1.LabelAppName] == slinkyv1beta1.AppName && l[slinkyv1beta1.LabelAppInstance] != "" {
		return obj.GetNamespace() + "/" + l[slinkyv1beta1.LabelAppInstance]
	}
	return ""
}

// objectMeta is the metadata of an event's object, unwrapping the
// tombstone a delete missed by the watch arrives as; nil for anything else.
func objectMeta(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m
}

// enqueueOwner puts the key of the NodeSet obj belongs to (OwnerKey).
func enqueueOwner(q Queue, obj any) {
	if m := objectMeta(obj); m != nil {
		if key := OwnerKey(m); key != "" {
			q.Add(key)
		}
	}
}

// ownerHandler: every event of the kind syncs the object's NodeSet.
func ownerHandler(q Queue) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueueOwner(q, obj) },
		UpdateFunc: func(_, cur any) { enqueueOwner(q, cur) },
		DeleteFunc: func(obj any) { enqueueOwner(q, obj) },
	}
}

// enqueueNamespace puts every NodeSet of the object's namespace.
func enqueueNamespace(q Queue, nodeSets slinkylisters.NodeSetLister, obj any) {
	m := objectMeta(obj)
	if m == nil {
		return
	}
	sets, err := nodeSets.NodeSets(m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range sets {
		q.Add(s.Namespace + "/" + s.Name)
	}
}

// namespaceHandler: every event of the kind syncs each NodeSet of the
// object's namespace.
func namespaceHandler(q Queue, nodeSets slinkylisters.NodeSetLister) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueueNamespace(q, nodeSets, obj) },
		UpdateFunc: func(_, cur any) { enqueueNamespace(q, nodeSets, cur) },
		DeleteFunc: func(obj any) { enqueueNamespace(q, nodeSets, obj) },
	}
}
