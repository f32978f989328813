package printers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// EventQuery names the objects whose events to read: those of a kind
// (apiVersion and kind, e.g. "bus.volcano.sh/v1alpha1" and "Command") in a
// namespace ("" for every namespace: a cluster-scoped object's events are
// in "default", but a recorder may put them elsewhere), and of one name
// when Name is set.
type EventQuery struct {
	APIVersion, Kind string
	Namespace, Name  string
}

// LatestWarnings returns, per object UID, the most recent Warning event
// about the objects q names: what their controller last reported as wrong,
// which a pending Command or a timed-out --wait shows. One list request.
func LatestWarnings(ctx context.Context, kc kubernetes.Interface, q EventQuery) (map[types.UID]corev1.Event, error) {
	set := fields.Set{"involvedObject.kind": q.Kind, "type": corev1.EventTypeWarning}
	if q.APIVersion != "" {
		set["involvedObject.apiVersion"] = q.APIVersion
	}
	if q.Name != "" {
		set["involvedObject.name"] = q.Name
	}
	evs, err := kc.CoreV1().Events(q.Namespace).List(ctx, metav1.ListOptions{FieldSelector: set.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	out := map[types.UID]corev1.Event{}
	for _, e := range evs.Items {
		uid := e.InvolvedObject.UID
		if old, ok := out[uid]; !ok || !LastSeen(&e).Before(LastSeen(&old)) {
			out[uid] = e
		}
	}
	return out, nil
}

// LastSeen is when an event was last observed, however its recorder kept
// the time (a series, count and lastTimestamp, or eventTime alone).
func LastSeen(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
