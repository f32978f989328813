package rules

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
		"children":  {"p": {State: "Closed", Children: 1, Child: "c"}, "shut": {State: "Closing"}},
		"hierarchy": {"c": {Parent: "p"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("indexes:\n got %+v\nwant %+v", got, want)
	}
}
