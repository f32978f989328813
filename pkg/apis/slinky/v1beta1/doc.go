// Package v1beta1 holds our Go types for Slinky's slinky.slurm.net/v1beta1
// API group (NodeSet). On the wire they are Slinky's: field names, JSON tags,
// defaults and validation follow the upstream CRD so that objects round-trip
// between our controller and Slinky's operator.
//
// +k8s:deepcopy-gen=package
// +groupName=slinky.slurm.net
// +kubebuilder:object:generate=true
package v1beta1
