package nodeset

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newDaemonNode creates a Node object (deleted when the test ends) for a
// DaemonSet-mode NodeSet to match; it returns its name.
func (e *env) newDaemonNode(name string, labels, annotations map[string]string, taints ...corev1.Taint) string {
	e.T.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.NodeSpec{Taints: taints}}
	created, err := e.Kube.CoreV1().Nodes().Create(e.Ctx, node, metav1.CreateOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() { _ = e.Kube.CoreV1().Nodes().Delete(e.Ctx, name, metav1.DeleteOptions{}) })
	// The API server taints a new node not-ready (TaintNodesByCondition);
	// with no kubelet and no node lifecycle controller here, the test
	// plays them and says the node is ready: its taints are the given ones.
	created.Spec.Taints = taints
	if _, err := e.Kube.CoreV1().Nodes().Update(e.Ctx, created, metav1.UpdateOptions{}); err != nil {
		e.T.Fatal(err)
	}
	return name
}

// podTarget is the node a DaemonSet-mode pod is for: the one it is bound
// to, else the one its required node affinity names.
func podTarget(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// daemonPods are the namespace's live pods by the node they are for.
func (e *env) daemonPods() map[string]*corev1.Pod {
	e.T.Helper()
	out := map[string]*corev1.Pod{}
	for _, p := range e.Pods() {
		out[podTarget(p)] = p
	}
	return out
}

// bindDaemonPods plays the scheduler: each unscheduled pod is bound to
// the node its affinity requires.
func (e *env) bindDaemonPods() {
	e.T.Helper()
	for node, p := range e.daemonPods() {
		if p.Spec.NodeName != "" {
			continue
		}
		err := e.Kube.CoreV1().Pods(e.NS).Bind(e.Ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
		if err != nil {
			e.T.Fatal(err)
		}
	}
}
