package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=jobtemplates,scope=Namespaced,shortName=jt
// +kubebuilder:subresource:status

// JobTemplate is a Volcano Job's spec under a name. Nothing runs it by
// itself: a JobFlow's step names it, and Volcano's jobflow controller makes
// a Job from it.
type JobTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the spec of the Jobs made from the template.
	Spec   batchv1alpha1.JobSpec `json:"spec,omitempty"`
	Status JobTemplateStatus     `json:"status,omitempty"`
}

// JobTemplateStatus is what Volcano's jobtemplate controller recorded.
type JobTemplateStatus struct {
	// JobDependsOnList names the Jobs made from the template.
	// +optional
	JobDependsOnList []string `json:"jobDependsOnList,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// JobTemplateList is a list of JobTemplates.
type JobTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []JobTemplate `json:"items"`
}
