// Package v1alpha1 holds our Go types for Volcano's batch.volcano.sh/v1alpha1
// API group: the Job, a set of tasks (each a pod template with replicas)
// that Volcano's job controller runs as one gang-scheduled unit. On the wire
// they are Volcano's: field names, JSON tags and validation follow the
// upstream CRD, so that a Job written by Volcano round-trips through them.
//
// kubectl-vc has no job controller: the CLI reads Jobs, creates them and
// asks Volcano's job controller to act on them through bus.volcano.sh
// Commands.
//
// +k8s:deepcopy-gen=package
// +groupName=batch.volcano.sh
// +kubebuilder:object:generate=true
package v1alpha1
