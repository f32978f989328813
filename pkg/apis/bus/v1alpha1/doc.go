// Package v1alpha1 holds our Go types for Volcano's bus.volcano.sh/v1alpha1
// API group: the Command, a request to act on another object.
//
// +k8s:deepcopy-gen=package
// +groupName=bus.volcano.sh
// +kubebuilder:object:generate=true
package v1alpha1
