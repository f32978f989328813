package nodeset

import (
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// ownedConditions lists the condition types this controller writes: the
// table's (pkg/rules/nodesetconditions), where each is declared once with
// its reasons and owner. Conditions of other types (Slinky's
// ReservationCreated) are left alone.
var ownedConditions = conditions.Types()

// maxMessage bounds a condition's and an event's message, in bytes
// (issue 58): a message is made of what Slurm, slurmrestd or an object
// said, and the NodeSet CRD refuses a condition message past 32 768
// characters: the whole status write was refused, and the NodeSet kept no
// condition at all. A longer message is cut and says how much it left out.
const maxMessage = 4096

// boundMessage cuts a message to maxMessage bytes, at a character's start.
func boundMessage(m string) string {
	if len(m) <= maxMessage {
		return m
	}
	tail := fmt.Sprintf("… (%d more bytes)", len(m)-maxMessage)
	cut := maxMessage - len(tail)
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + tail
}

// setCondition records a condition this sync evaluated.
func (s *nodeSetSync) setCondition(typ string, ok bool, reason, message string) {
	message = boundMessage(message)
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
	message = boundMessage(message)
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

// boundedRecorder cuts every event message to maxMessage bytes: events
// are made of the same texts as conditions (Slurm's errors, objects'
// names and fields).
type boundedRecorder struct{ record.EventRecorder }

func (r boundedRecorder) Event(obj runtime.Object, typ, reason, message string) {
	r.EventRecorder.Event(obj, typ, reason, boundMessage(message))
}

func (r boundedRecorder) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	r.EventRecorder.Event(obj, typ, reason, boundMessage(fmt.Sprintf(format, args...)))
}

func (r boundedRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, typ, reason, format string, args ...any) {
	r.EventRecorder.AnnotatedEventf(obj, annotations, typ, reason, "%s", boundMessage(fmt.Sprintf(format, args...)))
}
