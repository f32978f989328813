package rules

import (
	"reflect"
	"testing"

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
