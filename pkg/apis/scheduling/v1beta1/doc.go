// Package v1beta1 holds our Go types for Volcano's scheduling.volcano.sh/v1beta1
// API group. On the wire they are Volcano's: field names, JSON tags and
// validation follow the upstream CRDs so objects round-trip both ways.
//
// +k8s:deepcopy-gen=package
// +groupName=scheduling.volcano.sh
// +kubebuilder:object:generate=true
package v1beta1
