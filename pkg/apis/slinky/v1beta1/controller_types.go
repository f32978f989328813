package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=controllers,scope=Namespaced,shortName=slurmctld
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// Controller is Slinky's slurmctld: the Slurm cluster a NodeSet joins
// (NodeSet.spec.controllerRef names it). It belongs to Slinky's operator:
// kubectl-vc only reads it, to find the cluster's JWT key and its RestApi,
// and never creates, updates or deletes one. The type models only the part
// of the spec we read (plus what a test fixture needs to pass upstream's
// validation); the status is not modelled. Its generated CRD is for tests
// only (pkg/crds/slinkyoperator) and is never installed by kubectl-vc.
type Controller struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ControllerSpec `json:"spec,omitempty"`
}

// ControllerSpec is the part of a Controller's spec kubectl-vc reads.
// Upstream's other fields (slurmctld container, persistence, service, ...)
// are not modelled; the schema keeps them (preserve-unknown-fields) so a
// test fixture written in upstream's shape is not pruned. The validation
// rules are upstream's for the fields modelled here.
//
// +kubebuilder:pruning:PreserveUnknownFields
// +kubebuilder:validation:XValidation:rule="!self.external ? has(self.slurmKeyRef) : true",message="slurmKeyRef must be set when external is false"
// +kubebuilder:validation:XValidation:rule="!self.external ? has(self.jwtKeyRef) || has(self.jwtHs256KeyRef) : true",message="jwtKeyRef or jwtHs256KeyRef must be set when external is false"
// +kubebuilder:validation:XValidation:rule="self.external ? has(self.externalConfig) : true",message="externalConfig must be set when external is true"
type ControllerSpec struct {
	// External is true when slurmctld runs outside Kubernetes: Slinky's
	// operator then deploys nothing for it and ExternalConfig says where it
	// is; the other fields are ignored.
	// +kubebuilder:default=false
	// +optional
	External bool `json:"external,omitempty"`

	// ExternalConfig is where an external slurmctld listens (set when
	// External is true).
	// +optional
	ExternalConfig *ExternalConfig `json:"externalConfig,omitempty"`

	// SlurmKeyRef selects the Secret key of Slurm's auth/slurm key. The
	// NodeSet controller mounts it in slurmd at /etc/slurm/slurm.key, as
	// Slinky's operator does (the Secret itself is never read); upstream
	// requires it on a Controller that is not external.
	// +optional
	SlurmKeyRef *corev1.SecretKeySelector `json:"slurmKeyRef,omitempty"`

	// JwtKeyRef selects the Secret key holding the JWT signing key of
	// Slurm's auth/jwt (HS256), with which tokens for slurmrestd are signed.
	// +optional
	JwtKeyRef *corev1.SecretKeySelector `json:"jwtKeyRef,omitempty"`

	// JwtHs256KeyRef is the older name of JwtKeyRef, still found on objects
	// written before it; upstream deprecates it in favour of jwtKeyRef.
	// +optional
	JwtHs256KeyRef *corev1.SecretKeySelector `json:"jwtHs256KeyRef,omitempty"`
}

// ExternalConfig says how to reach a Slurm component that runs outside
// Kubernetes.
type ExternalConfig struct {
	// Host is the component's hostname or IP address.
	Host string `json:"host"`
	// Port is the port it listens on.
	Port int `json:"port"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// ControllerList is a list of Controllers.
type ControllerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Controller `json:"items"`
}

// JWTKeySelector returns the selector of the Secret key that holds the
// Controller's JWT HS256 signing key: spec.jwtKeyRef, or else the
// deprecated spec.jwtHs256KeyRef, which objects written before jwtKeyRef
// carry instead; nil when neither is set (possible on an external
// Controller). The Secret is in the Controller's namespace.
func (c *Controller) JWTKeySelector() *corev1.SecretKeySelector {
	if c.Spec.JwtKeyRef != nil {
		return c.Spec.JwtKeyRef
	}
	return c.Spec.JwtHs256KeyRef
}
