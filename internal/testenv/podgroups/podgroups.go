// Package podgroups holds podgroups that several suites show through the
// binary: the example the podgroup commands, their completion and the
// documentation are run against.
package podgroups

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// ExampleNamespace is the namespace of the example.
const ExampleNamespace = "e2e-pg"

// mu serializes MakeExample: tests of one binary may call it in parallel.
var mu sync.Mutex

// MakeExample makes sure namespace e2e-pg holds podgroups train (queue
// q-pg, Running, one member pod on node-7, one event) and eval, creating
// what is missing. It checks at every call rather than once per test
// binary: where kube-controller-manager runs, its pod garbage collector
// deletes train-0 about 40 s after it appears (node-7 is no Node), so a
// later test, or a repeat under -count, would find the pod gone.
func MakeExample(t testing.TB, kc kubernetes.Interface, vc versioned.Interface) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	ensure(t, kc, vc)
}

func ensure(t testing.TB, kc kubernetes.Interface, vc versioned.Interface) {
	t.Helper()
	ctx := context.Background()
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ExampleNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// On a cluster with kube-controller-manager the ServiceAccount
	// admission plugin refuses pods until the namespace has its default
	// ServiceAccount; make it rather than wait for the controller's.
	if _, err := kc.CoreV1().ServiceAccounts(ExampleNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pgs := vc.SchedulingV1beta1().PodGroups(ExampleNamespace)
	for _, pg := range []*schedulingv1beta1.PodGroup{
		{ObjectMeta: metav1.ObjectMeta{Name: "train"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "q-pg", MinMember: 2, PriorityClassName: "high"},
			Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning, Running: 2}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eval"}, Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1}},
	} {
		if _, err := pgs.Create(ctx, pg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	pods := kc.CoreV1().Pods(ExampleNamespace)
	pod, err := pods.Get(ctx, "train-0", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train-0", Namespace: ExampleNamespace, Annotations: map[string]string{keys.KubeGroupName: "train"}},
			Spec: corev1.PodSpec{NodeName: "node-7", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		pod, err = pods.Create(ctx, pod, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	if pod.Status.Phase != corev1.PodRunning {
		pod.Status.Phase = corev1.PodRunning
		if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	train, _ := pgs.Get(ctx, "train", metav1.GetOptions{})
	if _, err := kc.CoreV1().Events(ExampleNamespace).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "train.e2e", Namespace: ExampleNamespace},
		InvolvedObject: corev1.ObjectReference{Kind: "PodGroup", Name: "train", Namespace: ExampleNamespace, UID: train.UID, APIVersion: "scheduling.volcano.sh/v1beta1"},
		Reason:         "Scheduled", Message: "all 2 members bound", Type: "Normal", Source: corev1.EventSource{Component: "volcano"},
		LastTimestamp: metav1.Now(),
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
