// Package v1alpha1 holds our Go types for Volcano's topology.volcano.sh/v1alpha1
// API group: the HyperNode, one node of the network topology tree that
// Volcano's network-topology-aware scheduling places jobs in. On the wire
// they are Volcano's: field names, JSON tags and validation follow the
// upstream CRD so objects round-trip both ways.
//
// +k8s:deepcopy-gen=package
// +groupName=topology.volcano.sh
// +kubebuilder:object:generate=true
package v1alpha1
