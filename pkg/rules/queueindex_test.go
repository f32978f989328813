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
		"team-a":  {State: "Closing", Parent: "team"},
		"team-b":  {Parent: "team"},
		"orphan":  {State: "Unknown", Parent: "missing"},
		"missing": {Children: 1, Child: "orphan"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n got %+v\nwant %+v", got, want)
	}
	if got := QueueIndexEntries(nil); len(got) != 0 {
		t.Fatalf("no queues gave %+v", got)
	}
}

// The resource lists a queue sets, and per parent the largest amount of each
// resource among its children and who sets it.
func TestQueueIndexEntriesResources(t *testing.T) {
	res := func(s string) corev1.ResourceList {
		l, err := ParseResourceList("test", s)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	q := func(name, parent, capability, guarantee string) *v1beta1.Queue {
		out := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.QueueSpec{Parent: parent}}
		if capability != "" {
			out.Spec.Capability = res(capability)
		}
		if guarantee != "" {
			out.Spec.Guarantee.Resource = res(guarantee)
		}
		return out
	}
	got := QueueIndexEntries([]*v1beta1.Queue{
		q("flat", "", "cpu=4", ""),
		q("p", "", "cpu=16,memory=64Gi", ""),
		q("p-b", "p", "cpu=8", "cpu=1000m"),
		q("p-a", "p", "cpu=8,nvidia.com/gpu=2", ""),
		q("p-c", "p", "cpu=7900m,memory=1Gi", ""),
	})
	if e := got["flat"]; !reflect.DeepEqual(e, admissionv1alpha1.QueueIndexEntry{Capability: map[string]string{"cpu": "4"}}) {
		t.Fatalf("flat: %+v", e)
	}
	p := got["p"]
	wantCap := map[string]admissionv1alpha1.QueueIndexBound{
		"cpu":            {Amount: "8", Child: "p-a"}, // a tie goes to the first by name
		"nvidia.com/gpu": {Amount: "2", Child: "p-a"},
		"memory":         {Amount: "1Gi", Child: "p-c"},
	}
	if p.Children != 3 || !reflect.DeepEqual(p.ChildCapability, wantCap) ||
		!reflect.DeepEqual(p.ChildGuarantee, map[string]admissionv1alpha1.QueueIndexBound{"cpu": {Amount: "1", Child: "p-b"}}) ||
		p.ChildDeserved != nil || p.Capability["memory"] != "64Gi" {
		t.Fatalf("p: %+v", p)
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
		"states":    {"p": {State: "Closed"}, "shut": {State: "Closing"}},
		"children":  {"p": {Children: 1, Child: "c"}},
		"jobs":      {"p": {State: "Closed", Children: 1, Child: "c"}, "shut": {State: "Closing"}},
		"hierarchy": {"c": {Parent: "p"}},
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
	if got, want := texts["hierarchy"]["p"], "|cpu=8,nvidia.com/gpu=2|||cpu=7=c-b||memory=1Gi=c.a"; got != want {
		t.Fatalf("hierarchy line of p = %q, want %q", got, want)
	}
	if got, want := texts["jobs"]["p"], "Closed|2|c-b"; got != want {
		t.Fatalf("jobs line of p = %q, want %q", got, want)
	}
	if got, want := texts["children"]["p"], "|2|c-b"; got != want {
		t.Fatalf("children line of p = %q, want %q", got, want)
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
	// A key with a separator in it is no resource: left out.
	odd := QueueIndexLines(QueueIndexes([]*v1beta1.Queue{{ObjectMeta: metav1.ObjectMeta{Name: "odd"},
		Spec: v1beta1.QueueSpec{Capability: corev1.ResourceList{"cpu": resource.MustParse("1"), "a=b": resource.MustParse("2"), "x|y,z": resource.MustParse("3")}}}}))
	if got, want := odd["hierarchy"]["odd"], "|cpu=1|||||"; got != want {
		t.Fatalf("hierarchy line with odd keys = %q, want %q", got, want)
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
		{"states", "Closed"}, {"children", "|x|a"}, {"children", "|-1|a"}, {"hierarchy", "p|cpu||||"},
		{"hierarchy", "p|cpu|||||"}, {"hierarchy", "p||||cpu=1||"},
	} {
		if _, err := ParseQueueIndexLine(bad.index, bad.line); err == nil {
			t.Errorf("%s line %q read without an error", bad.index, bad.line)
		}
	}
}

// BenchmarkQueueIndexEntriesText is serve's rebuild of the four index texts
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
