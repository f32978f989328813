package rules

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueIndexEntries(t *testing.T) {
	q := func(name, parent string, state v1beta1.QueueState) *v1beta1.Queue {
		return &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.QueueSpec{Parent: parent}, Status: v1beta1.QueueStatus{State: state}}
	}
	got := QueueIndexEntries([]*v1beta1.Queue{
		q("root", "", ""), q("default", "root", "Open"), q("flat", "", ""),
		q("team", "", "Closed"), q("team-b", "team", ""), q("team-a", "team", "Closing"),
		q("orphan", "missing", "Unknown"),
	})
	want := map[string]admissionv1alpha1.QueueIndexEntry{
		"team":    {State: "Closed", Children: 2, Child: "team-a"},
		"team-a":  {State: "Closing"},
		"orphan":  {State: "Unknown"},
		"missing": {Children: 1, Child: "orphan"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n got %+v\nwant %+v", got, want)
	}
	if got := QueueIndexEntries(nil); len(got) != 0 {
		t.Fatalf("no queues gave %+v", got)
	}
}

// Each index holds only what its policies read.
func TestQueueIndexesSplit(t *testing.T) {
	got := QueueIndexes([]*v1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: v1beta1.QueueStatus{State: "Closed"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1beta1.QueueSpec{Parent: "p"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "flat"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "shut"}, Status: v1beta1.QueueStatus{State: "Closing"}},
	})
	want := map[string]map[string]admissionv1alpha1.QueueIndexEntry{
		"states":   {"p": {State: "Closed"}, "shut": {State: "Closing"}},
		"jobs":     {"p": {State: "Closed", Children: 1, Child: "c"}, "shut": {State: "Closing"}},
		"children": {"p": {Children: 1, Child: "c"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("indexes:\n got %+v\nwant %+v", got, want)
	}
}

// Each entry's line reads back as the entry, and its fields split where the
// policies split them.
func TestQueueIndexLinesRoundTrip(t *testing.T) {
	idx := QueueIndexes([]*v1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: v1beta1.QueueStatus{State: "Closed"},
			Spec: v1beta1.QueueSpec{Capability: corev1.ResourceList{"cpu": resource.MustParse("8"), "nvidia.com/gpu": resource.MustParse("2")}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c.a"}, Spec: v1beta1.QueueSpec{Parent: "p", Capability: corev1.ResourceList{"cpu": resource.MustParse("6")},
			Guarantee: v1beta1.Guarantee{Resource: corev1.ResourceList{"memory": resource.MustParse("1Gi")}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c-b"}, Spec: v1beta1.QueueSpec{Parent: "p", Capability: corev1.ResourceList{"cpu": resource.MustParse("7")}}},
	})
	texts := QueueIndexLines(idx)
	if got, want := texts["jobs"]["p"], "Closed|2|c-b"; got != want {
		t.Fatalf("jobs line of p = %q, want %q", got, want)
	}
	if got, want := texts["jobs"]["c-b"], ""; got != want {
		t.Fatalf("jobs line of c-b (Open, no children) = %q, want none", got)
	}
	if got, want := texts["states"]["p"], "Closed||"; got != want {
		t.Fatalf("states line of p = %q, want %q", got, want)
	}
	for name, lines := range texts {
		for q, line := range lines {
			e, err := ParseQueueIndexLine(name, line)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(e, idx[name][q]) {
				t.Errorf("%s/%s: %q reads back as %+v, want %+v", name, q, line, e, idx[name][q])
			}
		}
	}
	// The texts the objects hold read back as the lines.
	for name, text := range QueueIndexEntriesText([]*v1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: v1beta1.QueueStatus{State: "Closed"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: v1beta1.QueueSpec{Parent: "p"}},
	}) {
		lines, err := ParseQueueIndexText(text)
		if err != nil {
			t.Fatal(err)
		}
		if QueueIndexText(lines) != text {
			t.Errorf("index %s: %q reads back as %v", name, text, lines)
		}
	}
	if got, want := QueueIndexText(map[string]string{"b": "Closed||", "a": "|1|c"}), ";a:|1|c;b:Closed||;"; got != want {
		t.Fatalf("text = %q, want %q", got, want)
	}
	for _, bad := range []string{"a:x;", ";a:x", ";ax;", ";a:x;a:y;", ";:x;"} {
		if _, err := ParseQueueIndexText(bad); err == nil {
			t.Errorf("index text %q read without an error", bad)
		}
	}
	for _, bad := range []struct{ index, line string }{
		{"states", "Closed"}, {"jobs", "|x|a"}, {"jobs", "|-1|a"}, {"jobs", "Closed|1|a|b"},
	} {
		if _, err := ParseQueueIndexLine(bad.index, bad.line); err == nil {
			t.Errorf("%s line %q read without an error", bad.index, bad.line)
		}
	}
}

// BenchmarkQueueIndexEntriesText is serve's rebuild of the index texts
// after a queue change (plugins/queueindex): 10 000 queues, each with a
// capability, every other one under a parent of 100 children.
func BenchmarkQueueIndexEntriesText(b *testing.B) {
	queues := make([]*v1beta1.Queue, 0, 10000)
	for i := range 10000 {
		q := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q-%05d", i)},
			Spec: v1beta1.QueueSpec{Capability: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi")}}}
		if i%2 == 1 {
			q.Spec.Parent = fmt.Sprintf("q-%05d", (i/200)*200)
		}
		if i%10 == 0 {
			q.Status.State = v1beta1.QueueStateClosed
		}
		queues = append(queues, q)
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		size = 0
		for _, text := range QueueIndexEntriesText(queues) {
			size += len(text)
		}
	}
	b.ReportMetric(float64(size), "index-bytes")
}
