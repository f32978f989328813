package cli

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueTree(t *testing.T) {
	for _, name := range []string{"root", "default"} {
		if _, err := env.vc.SchedulingV1beta1().Queues().Create(context.Background(),
			&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	mustVC(t, "queue", "create", "e2e-tree-a")
	mustVC(t, "queue", "create", "e2e-tree-b", "--parent", "e2e-tree-a")
	r := mustVC(t, "queue", "tree")
	lines := strings.Split(r.Stdout, "\n")
	idx := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, "│├└─ "), prefix+" ") {
				return i
			}
		}
		t.Fatalf("%s not in tree:\n%s", prefix, r.Stdout)
		return -1
	}
	root, a, b := idx("root"), idx("e2e-tree-a"), idx("e2e-tree-b")
	if !(root < a && a < b) || !strings.HasPrefix(lines[root], "root") {
		t.Errorf("order wrong:\n%s", r.Stdout)
	}
	if !strings.Contains(lines[b], "└── e2e-tree-b") || len(lines[b])-len(strings.TrimLeft(lines[b], " │")) <= len(lines[a])-len(strings.TrimLeft(lines[a], " │")) {
		t.Errorf("child not indented under its parent:\n%s", r.Stdout)
	}
}

// makePodGroups creates, once per run, namespace e2e-pg with podgroups

// train (queue q-pg, Running, one member pod on node-7, one event) and eval.

func makePodGroups(t *testing.T) {
	t.Helper()
	pgOnce.Do(func() { createPodGroups(t) })
}

var pgOnce sync.Once

func createPodGroups(t *testing.T) {
	ctx := context.Background()
	kc := kube(t)
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-pg"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pgs := env.vc.SchedulingV1beta1().PodGroups("e2e-pg")
	for _, pg := range []*schedulingv1beta1.PodGroup{
		{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "q-pg", MinMember: 2, PriorityClassName: "high"},
			Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning, Running: 2}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eval"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1}},
	} {
		if _, err := pgs.Create(ctx, pg, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train-0", Namespace: "e2e-pg", Annotations: map[string]string{keys.KubeGroupName: "train"}},
		Spec: corev1.PodSpec{NodeName: "node-7", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	pod, err := kc.CoreV1().Pods("e2e-pg").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	if _, err := kc.CoreV1().Pods("e2e-pg").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	train, _ := pgs.Get(ctx, "train", metav1.GetOptions{})
	if _, err := kc.CoreV1().Events("e2e-pg").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "train.e2e", Namespace: "e2e-pg"},
		InvolvedObject: corev1.ObjectReference{Kind: "PodGroup", Name: "train", Namespace: "e2e-pg", UID: train.UID, APIVersion: "scheduling.volcano.sh/v1beta1"},
		Reason:         "Scheduled", Message: "all 2 members bound", Type: "Normal", Source: corev1.EventSource{Component: "volcano"},
		LastTimestamp: metav1.Now(),
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
