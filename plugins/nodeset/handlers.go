package nodeset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// enqueueNodeSet syncs the NodeSet an event is about. The handlers in this
// file map each informer event to the NodeSets to sync and record what the
// expectations wait for.
func (c *Controller) enqueueNodeSet(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		c.wq.Add(key)
	}
}

// ownerKey is the key of the NodeSet controlling obj, or, for an orphan
// carrying our worker labels, of the NodeSet it may be adopted by.
func ownerKey(obj metav1.Object) string {
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

func metaOf(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, _ := obj.(metav1.Object)
	return m
}

func (c *Controller) enqueueOwner(obj any) {
	if m := metaOf(obj); m != nil {
		if key := ownerKey(m); key != "" {
			c.wq.Add(key)
		}
	}
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if key := ownerKey(pod); key != "" {
			c.exp.creationObserved(key)
		}
	}
	c.enqueueOwner(pod)
}

func (c *Controller) updatePod(old, cur any) {
	o, n := old.(*corev1.Pod), cur.(*corev1.Pod)
	if o.ResourceVersion == n.ResourceVersion {
		return
	}
	// A pod that starts terminating counts as deleted for the
	// expectations (see expectations).
	if n.DeletionTimestamp != nil && o.DeletionTimestamp == nil && metav1.GetControllerOf(n) != nil {
		if key := ownerKey(n); key != "" {
			c.exp.deletionObserved(key, n.UID)
		}
	}
	if ko, kn := ownerKey(o), ownerKey(n); ko != kn && ko != "" {
		c.wq.Add(ko)
	}
	c.enqueueOwner(n)
}

func (c *Controller) deletePod(obj any) {
	m := metaOf(obj)
	if m == nil {
		return
	}
	if metav1.GetControllerOf(m) != nil {
		if key := ownerKey(m); key != "" {
			c.exp.deletionObserved(key, m.GetUID())
		}
	}
	c.enqueueOwner(m)
}

// updateNode: a Kubernetes node (un)cordoned, or its topology annotation
// changed (topology.go), means its NodeSet pods must be
// (un)cordoned and their Slurm nodes drained or resumed.
func (c *Controller) updateNode(old, cur any) {
	o, n := old.(*corev1.Node), cur.(*corev1.Node)
	if o.Spec.Unschedulable == n.Spec.Unschedulable &&
		o.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec] == n.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec] &&
		o.Annotations[slinkyv1beta1.AnnotationNodeFeaturesSpec] == n.Annotations[slinkyv1beta1.AnnotationNodeFeaturesSpec] {
		return
	}
	objs, err := c.podIndex.ByIndex(podsByNodeIndex, n.Name)
	if err != nil {
		return
	}
	for _, obj := range objs {
		c.enqueueOwner(obj)
	}
}

// enqueueNamespace syncs every NodeSet in the object's namespace.
func (c *Controller) enqueueNamespace(obj any) {
	m := metaOf(obj)
	if m == nil || c.nodeSets == nil {
		return
	}
	sets, err := c.nodeSets.NodeSets(m.GetNamespace()).List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range sets {
		c.enqueueNodeSet(s)
	}
}

// enqueueDaemonNodeSets syncs every DaemonSet-mode NodeSet: a node that
// comes, goes, or changes what a template matches may gain or lose a pod.
func (c *Controller) enqueueDaemonNodeSets() {
	if c.nodeSets == nil {
		return
	}
	sets, err := c.nodeSets.List(labels.Everything())
	if err != nil {
		return
	}
	for _, ns := range sets {
		if daemonSetMode(ns) {
			c.enqueueNodeSet(ns)
		}
	}
}

func (c *Controller) addNode(any)    { c.enqueueDaemonNodeSets() }
func (c *Controller) deleteNode(any) { c.enqueueDaemonNodeSets() }

// updateNodeForDaemons: what nodeWantsPod and daemonHostname read changed.
// A node's status is written every few seconds; that alone changes none
// of it.
func (c *Controller) updateNodeForDaemons(old, cur any) {
	o, n := old.(*corev1.Node), cur.(*corev1.Node)
	if o.Spec.Unschedulable == n.Spec.Unschedulable && equality.Semantic.DeepEqual(o.Labels, n.Labels) &&
		equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) &&
		o.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride] == n.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride] {
		return
	}
	c.enqueueDaemonNodeSets()
}
