package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestDescribeFoldsRepeatedEvents writes repeated events to the real API
// server the two ways Kubernetes records repetition — the event recorder's
// aggregation (count, firstTimestamp, lastTimestamp) and an events.k8s.io
// series — and checks describe prints each once, folded as kubectl does:
// "<last seen> (x<count> over <first seen>)". An event of an earlier queue
// with the same name (another uid) is left out.
func TestDescribeFoldsRepeatedEvents(t *testing.T) {
	ctx := context.Background()
	kc := kubernetes.NewForConfigOrDie(env.cp.AdminConfig())
	deleteQueuesAfter(t, "e2e-events")
	mustVC(t, "queue", "create", "e2e-events")
	q := getQueue(t, "e2e-events")
	ref := corev1.ObjectReference{APIVersion: "scheduling.volcano.sh/v1beta1", Kind: "Queue", Name: q.Name, UID: q.UID}
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	day := 24 * time.Hour
	events := []corev1.Event{{
		// The recorder's aggregation: one object, count 12.
		ObjectMeta:     metav1.ObjectMeta{Name: "e2e-events.counted"},
		InvolvedObject: ref, Type: corev1.EventTypeWarning, Reason: "Unschedulable",
		Message: "queue is full", Count: 12, Source: corev1.EventSource{Component: "volcano-scheduler"},
		FirstTimestamp: metav1.NewTime(ago(5 * day)), LastTimestamp: metav1.NewTime(ago(3 * day)),
	}, {
		// An events.k8s.io series: eventTime and series.count.
		ObjectMeta:     metav1.ObjectMeta{Name: "e2e-events.series"},
		InvolvedObject: ref, Type: corev1.EventTypeNormal, Reason: "Reconciled",
		Message: "state Open", Action: "Sync", ReportingController: "volcano-controllers", ReportingInstance: "vc-0",
		EventTime: metav1.NewMicroTime(ago(6 * day)),
		Series:    &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(ago(2 * day))},
	}, {
		// Seen once: no folding.
		ObjectMeta:     metav1.ObjectMeta{Name: "e2e-events.once"},
		InvolvedObject: ref, Type: corev1.EventTypeNormal, Reason: "Opened", Message: "opened", Count: 1,
		Source:         corev1.EventSource{Component: "kubectl-vc"},
		FirstTimestamp: metav1.NewTime(ago(4 * day)), LastTimestamp: metav1.NewTime(ago(4 * day)),
	}, {
		// Same name, earlier queue.
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-events.stale"},
		InvolvedObject: func() corev1.ObjectReference {
			r := ref
			r.UID = "0000-earlier-queue"
			return r
		}(),
		Type: corev1.EventTypeNormal, Reason: "StaleReason", Message: "old queue", Count: 7,
		Source:         corev1.EventSource{Component: "kubectl-vc"},
		FirstTimestamp: metav1.NewTime(ago(7 * day)), LastTimestamp: metav1.NewTime(ago(7 * day)),
	}}
	for i := range events {
		if _, err := kc.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &events[i], metav1.CreateOptions{}); err != nil {
			t.Fatalf("create event %s: %v", events[i].Name, err)
		}
		name := events[i].Name
		t.Cleanup(func() {
			if err := kc.CoreV1().Events(metav1.NamespaceDefault).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
	}

	r := mustVC(t, "queue", "describe", "e2e-events")
	_, table, ok := strings.Cut(r.Stdout, "Events:")
	if !ok {
		t.Fatalf("no Events section:\n%s", r.Stdout)
	}
	t.Logf("Events:%s", table)
	for _, want := range []string{
		`(?m)^\s+Warning\s+Unschedulable\s+3d \(x12 over 5d\)\s+volcano-scheduler\s+queue is full$`,
		`(?m)^\s+Normal\s+Reconciled\s+2d \(x4 over 6d\)\s+volcano-controllers\s+state Open$`,
		`(?m)^\s+Normal\s+Opened\s+4d\s+kubectl-vc\s+opened$`,
	} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("events lack %s:\n%s", want, table)
		}
	}
	if n := strings.Count(table, "Unschedulable"); n != 1 {
		t.Errorf("repeated event printed %d times, want once folded:\n%s", n, table)
	}
	if strings.Contains(table, "StaleReason") {
		t.Errorf("event of an earlier queue with the same name shown:\n%s", table)
	}
}
