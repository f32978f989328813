package nodeset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The NodeSet status conditions this controller owns. Each is True when
// all is well; False says what stands in the way, and why, in its reason
// and message. Conditions of other types (Slinky's ReservationCreated)
// are left alone.
const (
	// conditionSlurmReachable: the last sync could read Slurm's node
	// states. False stops every action on the NodeSet until it can.
	conditionSlurmReachable = "SlurmReachable"
)

// ownedConditions lists the condition types this controller writes.
var ownedConditions = []string{conditionSpecSupported, conditionSlurmReachable, conditionServiceReady, conditionDisruptionBudgetReady,
	conditionSSHConfigReady}

// setCondition records a condition this sync evaluated.
func (s *nodeSetSync) setCondition(typ string, ok bool, reason, message string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message})
}

// setFalseWithWarning records a False condition and, when it says
// something new (it was not False with this reason and message), a
// Warning event. A NodeSet that stays in one failure is retried and
// resynced again and again; an event per sync would spend the budget the
// event recorder grants each object (25, then one per five minutes) on
// repeats, and the next new failure's event would be dropped.
func (s *nodeSetSync) setFalseWithWarning(typ, reason, eventReason, message string) {
	c := meta.FindStatusCondition(s.set.Status.Conditions, typ)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason || c.Message != message {
		s.c.recorder.Eventf(s.set, corev1.EventTypeWarning, eventReason, "%s", message)
	}
	s.setCondition(typ, false, reason, message)
}

// mergedConditions are the conditions of our types to write: those this
// sync evaluated, the others as they were. A condition whose status did
// not change keeps its transition time.
func (s *nodeSetSync) mergedConditions() []metav1.Condition {
	var out []metav1.Condition
	for _, typ := range ownedConditions {
		if c := meta.FindStatusCondition(s.set.Status.Conditions, typ); c != nil {
			out = append(out, *c)
		}
	}
	for _, c := range s.conditions {
		c.ObservedGeneration = s.set.Generation
		meta.SetStatusCondition(&out, c)
	}
	return out
}
