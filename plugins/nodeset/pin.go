package nodeset

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// pinToNode, as Slinky's operator does it: status.ordinalToNode remembers
// the Kubernetes node each ordinal runs on, and a pod made again for that
// ordinal must run there, as long as the node exists and the pod would
// still suit it (node selector, required node affinity, taints). A pin
// that no longer holds is dropped; with pinToNode off the map is empty.

// ordinalToNode computes status.ordinalToNode.
func (s *nodeSetSync) ordinalToNode(ctx context.Context) map[string]string {
	ns := s.set
	// In DaemonSet mode every pod is tied to its node already (daemonset.go),
	// and the operator keeps no map either.
	if !ns.Spec.PinToNode || daemonSetMode(ns) {
		return nil
	}
	out := map[string]string{}
	base := s.c.podBaseFor(ctx, ns)
	keep := func(ordinal, nodeName string) {
		node, err := s.c.nodes.Get(nodeName)
		if err != nil {
			return
		}
		if o, err := strconv.Atoi(ordinal); err != nil || !suits(klog.FromContext(ctx), newPod(ns, base, o, ""), node) {
			return
		}
		out[ordinal] = nodeName
	}
	for ordinal, node := range ns.Status.OrdinalToNode {
		keep(ordinal, node)
	}
	for _, p := range s.pods {
		// A pod made in DaemonSet mode has no ordinal to pin.
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && !isTerminating(p) && ordinalOf(ns, p) >= 0 {
			keep(strconv.Itoa(ordinalOf(ns, p)), p.Spec.NodeName)
		}
	}
	return out
}

// pin makes a new pod require the node its ordinal is pinned to.
func (c *Controller) pin(ctx context.Context, ns *slinkyv1beta1.NodeSet, pod *corev1.Pod, ordinal int) {
	if !ns.Spec.PinToNode {
		return
	}
	name, ok := ns.Status.OrdinalToNode[strconv.Itoa(ordinal)]
	if !ok {
		return
	}
	node, err := c.nodes.Get(name)
	if err != nil || !suits(klog.FromContext(ctx), pod, node) {
		return
	}
	requireNode(&pod.Spec, name)
}

// requireNode makes the pod require the node of that name, as Kubernetes'
// DaemonSet controller pins its pods: the node's name replaces the
// required node affinity terms (it is the narrowest of them; whoever pins
// checked the others), the preferred ones stay.
func requireNode(spec *corev1.PodSpec, name string) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	spec.Affinity.NodeAffinity = &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{name}}},
		}}},
		PreferredDuringSchedulingIgnoredDuringExecution: nodeAffinityPreferred(spec.Affinity.NodeAffinity),
	}
}

func nodeAffinityPreferred(a *corev1.NodeAffinity) []corev1.PreferredSchedulingTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

// suits says whether the scheduler could put the pod on the node, as far
// as node selection and taints go. logger is the taint helper's.
func suits(logger klog.Logger, pod *corev1.Pod, node *corev1.Node) bool {
	if ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); err != nil || !ok {
		return false
	}
	_, untolerated := corev1helper.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false)
	return !untolerated
}
