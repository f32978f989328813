package eventhandler

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Pod: a pod event syncs its NodeSet (OwnerKey), and a controlled pod's
// creation or deletion fulfils the expectations of its NodeSet.
func Pod(q Queue, exp Expectations) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { addPod(q, exp, obj) },
		UpdateFunc: func(old, cur any) { updatePod(q, exp, old, cur) },
		DeleteFunc: func(obj any) { deletePod(q, exp, obj) },
	}
}

func addPod(q Queue, exp Expectations, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if metav1.GetControllerOf(pod) != nil {
		if key := OwnerKey(pod); key != "" {
			exp.CreationObserved(key)
		}
	}
	enqueueOwner(q, pod)
}

func updatePod(q Queue, exp Expectations, old, cur any) {
	o, ok1 := old.(*corev1.Pod)
	n, ok2 := cur.(*corev1.Pod)
	if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
		return
	}
	// A pod that starts terminating counts as deleted for the
	// expectations: its NodeSet handles it as terminating from now on.
	if n.DeletionTimestamp != nil && o.DeletionTimestamp == nil && metav1.GetControllerOf(n) != nil {
		if key := OwnerKey(n); key != "" {
			exp.DeletionObserved(key, n.UID)
		}
	}
	// A pod released or taken by another NodeSet syncs the one it left.
	if ko, kn := OwnerKey(o), OwnerKey(n); ko != kn && ko != "" {
		q.Add(ko)
	}
	enqueueOwner(q, n)
}

func deletePod(q Queue, exp Expectations, obj any) {
	m := objectMeta(obj)
	if m == nil {
		return
	}
	if metav1.GetControllerOf(m) != nil {
		if key := OwnerKey(m); key != "" {
			exp.DeletionObserved(key, m.GetUID())
		}
	}
	enqueueOwner(q, m)
}

// PodsByNode names the pod informer's index by node name, through which a
// node's events find its pods (Node).
const PodsByNode = "nodeset:podsByNode"

// PodIndexers are the indexers the pod informer must be given before Node
// can find a node's pods.
func PodIndexers() cache.Indexers {
	return cache.Indexers{PodsByNode: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}, nil
		}
		return nil, nil
	}}
}
