package eventhandler

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	slinkylisters "github.com/kubectl-vc/kubectl-vc/pkg/client/listers/slinky/v1beta1"
)

// Node maps node events to NodeSets in two ways:
//   - a node (un)cordoned, or its topology or features annotation changed,
//     syncs the NodeSets of the pods on it (found through pods' PodsByNode
//     index): they are (un)cordoned and their Slurm nodes drained or
//     resumed;
//   - a node that comes, goes, or changes what a pod template matches
//     (labels, taints, schedulability, hostname override) syncs every
//     NodeSet that daemon says runs in DaemonSet mode: one may gain or lose
//     a pod. A node's status is written every few seconds; that alone
//     changes none of it.
func Node(q Queue, pods cache.Indexer, nodeSets slinkylisters.NodeSetLister, daemon func(*slinkyv1beta1.NodeSet) bool) cache.ResourceEventHandler {
	daemons := func() {
		sets, err := nodeSets.List(labels.Everything())
		if err != nil {
			return
		}
		for _, ns := range sets {
			if daemon(ns) {
				q.Add(ns.Namespace + "/" + ns.Name)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { daemons() },
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			n, ok2 := cur.(*corev1.Node)
			if !ok1 || !ok2 {
				return
			}
			if cordonOrAnnotationsChanged(o, n) {
				if objs, err := pods.ByIndex(PodsByNode, n.Name); err == nil {
					for _, obj := range objs {
						enqueueOwner(q, obj)
					}
				}
			}
			if matchChanged(o, n) {
				daemons()
			}
		},
		DeleteFunc: func(any) { daemons() },
	}
}

// cordonOrAnnotationsChanged: what the NodeSet pods on a node follow of it.
func cordonOrAnnotationsChanged(o, n *corev1.Node) bool {
	return o.Spec.Unschedulable != n.Spec.Unschedulable ||
		o.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec] != n.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec] ||
		o.Annotations[slinkyv1beta1.AnnotationNodeFeaturesSpec] != n.Annotations[slinkyv1beta1.AnnotationNodeFeaturesSpec]
}

// matchChanged: what decides whether a DaemonSet-mode NodeSet wants a pod
// on the node, and that pod's hostname.
func matchChanged(o, n *corev1.Node) bool {
	return o.Spec.Unschedulable != n.Spec.Unschedulable || !equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		!equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) ||
		o.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride] != n.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride]
}
