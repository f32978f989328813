package printers

import (
	"bytes"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubectl/pkg/describe"
)

// TestDescribeEventsAsKubectl: describeEvents and prefixWriter print what
// kubectl's describe.DescribeEvents and PrefixWriter print (the binary no
// longer links that package; this test does), for every way an event
// records its time and repetition, its source, and a message that needs
// trimming or escaping.
func TestDescribeEventsAsKubectl(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	micro := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(now.Add(-d)) }
	events := []corev1.Event{
		{Type: "Normal", Reason: "Created", Message: "  created \n", Source: corev1.EventSource{Component: "queue-controller"},
			FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(10 * time.Minute), Count: 1},
		{Type: "Warning", Reason: "Repeated", Message: "again", Source: corev1.EventSource{Component: "kubelet"},
			FirstTimestamp: ago(2 * time.Hour), LastTimestamp: ago(3 * time.Minute), Count: 12,
			InvolvedObject: corev1.ObjectReference{FieldPath: "spec.containers{main}"}},
		{Type: "Warning", Reason: "Series", Message: "in a series", ReportingController: "volcano.sh/scheduler",
			EventTime: micro(40 * time.Minute), Series: &corev1.EventSeries{Count: 5, LastObservedTime: micro(90 * time.Second)}},
		{Type: "Normal", Reason: "EventTimeOnly", Message: "new style", ReportingController: "x", EventTime: micro(5 * time.Second)},
		{Type: "Normal", Reason: "NoTime", Message: "\x1b[31mred\x1b[0m\tand a tab"},
	}
	for _, tc := range []struct {
		name string
		list []corev1.Event
	}{{"none", nil}, {"all", events}} {
		render := func(fn func(*corev1.EventList, *tabwriter.Writer)) string {
			var buf bytes.Buffer
			tw := tabwriter.NewWriter(&buf, 0, 8, 2, ' ', 0)
			// Each gets its own copy: both sort the list in place.
			fn(&corev1.EventList{Items: append([]corev1.Event(nil), tc.list...)}, tw)
			_ = tw.Flush()
			return buf.String()
		}
		want := render(func(l *corev1.EventList, w *tabwriter.Writer) {
			pw := describe.NewPrefixWriter(w)
			pw.Write(describe.LEVEL_0, "Name:\t%s\n", "q")
			pw.Write(describe.LEVEL_2, "Deep:\t%d\n", 2)
			describe.DescribeEvents(l, pw)
		})
		got := render(func(l *corev1.EventList, w *tabwriter.Writer) {
			pw := &prefixWriter{out: w}
			pw.Write(0, "Name:\t%s\n", "q")
			pw.Write(2, "Deep:\t%d\n", 2)
			describeEvents(l, pw)
		})
		if got != want {
			t.Errorf("%s: got\n%s\nkubectl prints\n%s", tc.name, got, want)
		}
	}
}
