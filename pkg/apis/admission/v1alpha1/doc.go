// Package v1alpha1 holds kubectl-vc's own admission.kubectl-vc.io/v1alpha1
// API group: the QueueIndex, what serve records of the queues so that the
// API server's admission policies read one object per request instead of
// every Queue (docs/admission.md).
//
// +k8s:deepcopy-gen=package
// +groupName=admission.kubectl-vc.io
// +kubebuilder:object:generate=true
package v1alpha1
