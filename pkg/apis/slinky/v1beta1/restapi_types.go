package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Where Slinky's operator serves a RestApi. These are conventions of its
// builder, not fields of the API: the Service of RestApi "<name>" is named
// "<name>-restapi", in the RestApi's namespace, and its port is
// spec.service.port when set, else slurmrestd's default, 6820.
const (
	// RestApiServiceSuffix ends the name of a RestApi's Service.
	RestApiServiceSuffix = "-restapi"
	// SlurmrestdPort is slurmrestd's port, and the Service port of a
	// RestApi that does not set spec.service.port.
	SlurmrestdPort int32 = 6820
)

// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=restapis,scope=Namespaced,shortName=slurmrestd
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// RestApi is Slinky's slurmrestd for the Controller its spec.controllerRef
// names. It belongs to Slinky's operator: kubectl-vc only reads it, to find
// the Service through which it reaches a NodeSet's Slurm cluster, and never
// creates, updates or deletes one. The type models only the part of the
// spec we read; the status is not modelled. Its generated CRD is for tests
// only (pkg/crds/slinkyoperator) and is never installed by kubectl-vc.
type RestApi struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RestApiSpec `json:"spec,omitempty"`
}

// RestApiSpec is the part of a RestApi's spec kubectl-vc reads. Upstream's
// other fields (replicas, slurmrestd container, pod template) are not
// modelled; the schema keeps them (preserve-unknown-fields) so a test
// fixture written in upstream's shape is not pruned.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RestApiSpec struct {
	// ControllerRef names the Controller, in the RestApi's namespace, whose
	// slurmctld this slurmrestd talks to.
	ControllerRef corev1.LocalObjectReference `json:"controllerRef"`

	// Service is the template of the RestApi's Service; only its port is
	// modelled.
	// +optional
	Service *RestApiService `json:"service,omitempty"`
}

// RestApiService is the part of a RestApi's Service template kubectl-vc
// reads. Upstream's other fields (metadata, nodePort, spec) are kept by the
// schema but not modelled.
//
// +kubebuilder:pruning:PreserveUnknownFields
type RestApiService struct {
	// Port is the Service's port; unset or 0 means SlurmrestdPort.
	// +optional
	Port int `json:"port,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// RestApiList is a list of RestApis.
type RestApiList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RestApi `json:"items"`
}

// RestApiServiceName is the name of the Service Slinky's operator makes for
// the named RestApi: "<name>-restapi".
func RestApiServiceName(restAPIName string) string {
	return restAPIName + RestApiServiceSuffix
}

// ServiceName is the name of the RestApi's Service, in its namespace.
func (r *RestApi) ServiceName() string {
	return RestApiServiceName(r.Name)
}

// ServicePort is the port of the RestApi's Service: spec.service.port when
// set, else SlurmrestdPort.
func (r *RestApi) ServicePort() int32 {
	if s := r.Spec.Service; s != nil && s.Port > 0 && s.Port <= 65535 {
		return int32(s.Port)
	}
	return SlurmrestdPort
}
