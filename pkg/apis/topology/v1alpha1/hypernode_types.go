package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemberType is what a HyperNode's member is: a node or another HyperNode.
// +kubebuilder:validation:Enum=Node;HyperNode
type MemberType string

const (
	// MemberTypeNode members are Kubernetes nodes (the tree's leaves).
	MemberTypeNode MemberType = "Node"
	// MemberTypeHyperNode members are HyperNodes of a lower tier.
	MemberTypeHyperNode MemberType = "HyperNode"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=hypernodes,scope=Cluster,shortName=hn
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Tier",type=string,JSONPath=`.spec.tier`
// +kubebuilder:printcolumn:name="TierName",type=string,JSONPath=`.spec.tierName`
// +kubebuilder:printcolumn:name="NodeCount",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// HyperNode is a group of nodes (or of lower HyperNodes) that share a
// network level: a switch, a rack, a block. Volcano's scheduler keeps a job
// whose network topology is hard inside one HyperNode of a bounded tier.
type HyperNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the HyperNode's tier and members.
	// +optional
	Spec HyperNodeSpec `json:"spec"`
	// Status is written by Volcano's HyperNode controller.
	// +optional
	Status HyperNodeStatus `json:"status,omitempty"`
}

// HyperNodeSpec is a HyperNode's place in the tree.
type HyperNodeSpec struct {
	// Tier is the HyperNode's level: 1 holds nodes, higher tiers hold
	// lower HyperNodes, and a lower tier is a closer network.
	// +kubebuilder:validation:Minimum=0
	Tier int `json:"tier"`
	// TierName names the tier ("rack", "spine"); a job may name its
	// highest tier by it (highestTierName).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	TierName string `json:"tierName,omitempty"`
	// Members are the nodes or HyperNodes the HyperNode holds.
	// +kubebuilder:validation:MinItems=1
	// +optional
	Members []MemberSpec `json:"members,omitempty"`
}

// MemberSpec is one member of a HyperNode: its type and how it is found.
type MemberSpec struct {
	// Type is Node or HyperNode.
	// +required
	Type MemberType `json:"type"`
	// Selector finds the member.
	// +optional
	Selector MemberSelector `json:"selector,omitempty"`
}

// MemberSelector finds a member by exactly one of: its name, a regular
// expression over node names, or node labels. HyperNode members are
// found by exact name only.
// +kubebuilder:validation:XValidation:rule="has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)",message="Either ExactMatch or RegexMatch or LabelMatch must be specified"
// +kubebuilder:validation:XValidation:rule="(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0) + (has(self.labelMatch) ? 1 : 0) <= 1",message="Only one of ExactMatch, RegexMatch, or LabelMatch can be specified"
type MemberSelector struct {
	// ExactMatch names one node or HyperNode.
	// +optional
	ExactMatch *ExactMatch `json:"exactMatch,omitempty"`
	// RegexMatch matches node names (unanchored, as Go's regexp does).
	// +optional
	RegexMatch *RegexMatch `json:"regexMatch,omitempty"`
	// LabelMatch matches node labels (Node members only).
	// +optional
	LabelMatch *metav1.LabelSelector `json:"labelMatch,omitempty"`
}

// ExactMatch is a member's name.
type ExactMatch struct {
	// Name is the node's or HyperNode's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	Name string `json:"name"`
}

// RegexMatch is a regular expression over node names.
type RegexMatch struct {
	// Pattern is the regular expression.
	// +kubebuilder:validation:MinLength=1
	// +required
	Pattern string `json:"pattern"`
}

// HyperNodeStatus is what Volcano's HyperNode controller writes.
type HyperNodeStatus struct {
	// Conditions are the HyperNode's conditions.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// NodeCount is how many nodes the HyperNode holds.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NodeCount int64 `json:"nodeCount,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true

// HyperNodeList is a list of HyperNodes.
type HyperNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the HyperNodes.
	Items []HyperNode `json:"items"`
}
