package nodeset

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// checkSpec finds what the NodeSet asks for that this controller does not
// implement, records the SpecSupported condition and, when that changes,
// a Warning event. It returns true when the NodeSet must be left alone
// entirely.
func (s *nodeSetSync) checkSpec(ctx context.Context) (refuse bool) {
	spec := s.set.Spec
	var notes []string
	// A pod's name is its hostname, the Slurm node's name: a DNS label of
	// at most 63 characters. The schema does not bound ordinalPadding;
	// padded past that, no pod can be made, and each name would cost what
	// the padding states.
	// (DaemonSet-mode pods have no ordinal.)
	if spec.ScalingMode != slinkyv1beta1.ScalingModeDaemonSet && spec.OrdinalPadding > maxOrdinalPadding(s.set) {
		refuse = true
		notes = append(notes, fmt.Sprintf("ordinalPadding %d makes pod names longer than %d characters, the longest hostname: "+
			"no pod of this NodeSet is created, deleted, drained or updated (at most %d with this name)",
			spec.OrdinalPadding, validation.DNS1123LabelMaxLength, max(maxOrdinalPadding(s.set), 0)))
	}
	if note := s.scheduledUpdateNote(ctx); note != "" { // scheduled.go
		notes = append(notes, note)
	}
	if len(notes) == 0 {
		s.setCondition(conditions.SpecSupported, true, "Supported", "every field of the spec is acted on")
		return false
	}
	msg := strings.Join(notes, "; ")
	s.setFalseWithWarning(conditions.SpecSupported, "Unsupported", "UnsupportedSpec", msg)
	return refuse
}

// maxOrdinalPadding is the widest ordinal padding whose pod names,
// "<nodeset>-<ordinal>", can still be hostnames.
func maxOrdinalPadding(ns *slinkyv1beta1.NodeSet) int {
	return validation.DNS1123LabelMaxLength - len(ns.Name) - 1
}
