package v1beta1

import corev1 "k8s.io/api/core/v1"

// SlurmNodeName is the name of a NodeSet pod's Slurm node, as Slinky's
// operator reads it: a DaemonSet-mode pod's hostname (its Kubernetes
// node's, host network or not); else, on the host's network, the
// Kubernetes node's name; else the pod's hostname, or its name when it
// has none. A pod taken over
// from the operator whose template named a hostname registers under that
// hostname, not the pod's name. serve's NodeSet controller and 'nodeset
// describe' both look nodes up by it.
func SlurmNodeName(pod *corev1.Pod) string {
	switch {
	case pod.Labels[LabelScalingMode] == string(ScalingModeDaemonSet):
		return pod.Spec.Hostname
	case pod.Spec.HostNetwork:
		return pod.Spec.NodeName
	case pod.Spec.Hostname != "":
		return pod.Spec.Hostname
	}
	return pod.Name
}
