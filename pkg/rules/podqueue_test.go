package rules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueAnnotation(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     map[string]string
		want   string
		wantOK bool
	}{
		{"none", nil, "", false},
		{"long key", map[string]string{keys.QueueName: "a"}, "a", true},
		{"short key", map[string]string{keys.VolcanoQueueName: "b"}, "b", true},
		{"long key wins", map[string]string{keys.QueueName: "a", keys.VolcanoQueueName: "b"}, "a", true},
		{"present and empty still names", map[string]string{keys.QueueName: "", keys.VolcanoQueueName: "b"}, "", true},
	} {
		got, ok := QueueAnnotation(c.in)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: QueueAnnotation = %q, %v; want %q, %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}

func TestPodQueue(t *testing.T) {
	pod := func(ann, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann, Labels: labels}}
	}
	for _, c := range []struct {
		name string
		p    *corev1.Pod
		want string
	}{
		{"nothing", pod(nil, nil), ""},
		{"annotation", pod(map[string]string{keys.QueueName: "a"}, nil), "a"},
		{"label of a Job's pod", pod(nil, map[string]string{batchv1alpha1.QueueNameLabel: "j"}), "j"},
		{"annotation beats label", pod(map[string]string{keys.VolcanoQueueName: "a"}, map[string]string{batchv1alpha1.QueueNameLabel: "j"}), "a"},
	} {
		if got := PodQueue(c.p); got != c.want {
			t.Errorf("%s: PodQueue = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestQueueStatusKept(t *testing.T) {
	q := &v1beta1.Queue{}
	if QueueStatusKept(q) || StateOrOpen(q.Status.State) != v1beta1.QueueStateOpen {
		t.Fatalf("a queue without state: kept=%v state=%s, want not kept and Open", QueueStatusKept(q), StateOrOpen(q.Status.State))
	}
	q.Status.State = v1beta1.QueueStateClosed
	if !QueueStatusKept(q) || StateOrOpen(q.Status.State) != v1beta1.QueueStateClosed {
		t.Fatalf("a Closed queue: kept=%v state=%s", QueueStatusKept(q), StateOrOpen(q.Status.State))
	}
}
