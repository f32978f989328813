// Package faults holds fault tests on real processes: the built
// 'kubectl-vc serve' binary against the real local etcd and kube-apiserver,
// which the tests stop, restart and race against. Deadlines in these tests
// bound a poll (so a broken build fails instead of hanging); they are not
// assertions of speed, which belong to test/bench.
package faults

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
)

var (
	cp         *controlplane.ControlPlane
	binary     string
	kubeconfig string
	ctx        = context.Background()
)

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		cp, binary, kubeconfig = e.CP, e.Binary, e.Kubeconfig
		return nil
	}})
}

func clients(t testing.TB) (versioned.Interface, kubernetes.Interface) {
	t.Helper()
	cfg := cp.AdminConfig()
	cfg.QPS, cfg.Burst = -1, 0 // the tests' own setup is not what is measured
	return versioned.NewForConfigOrDie(cfg), kubernetes.NewForConfigOrDie(cfg)
}

// startServe starts serve and waits until it reports ready; it is killed
// when the test ends, so none outlives the test binary.
func startServe(t testing.TB, args ...string) *cptest.Serve {
	t.Helper()
	return cptest.StartServe(t, binary, kubeconfig, args...)
}

// poll retries cond until it holds. The deadline only bounds a broken run.
func poll(t testing.TB, what string, deadline time.Duration, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, deadline, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: not reached within %v (last error: %v)", what, deadline, last)
	}
}

var runs atomic.Int64

// perRun returns name with a suffix of its own in this process: the tests
// share one control plane, also across runs of a test (go test -count=N),
// and a fixed name would meet the previous run's object.
func perRun(name string) string {
	return fmt.Sprintf("%s-%d", name, runs.Add(1))
}

// namespace creates a namespace of this run (base and a suffix) and returns
// its name. When the test ends, after the serve processes it started
// afterwards are stopped, the pods and podgroups in it are deleted, so that
// a later test's serve does not start on them. The namespace itself stays:
// no namespace controller runs on this control plane to finish deleting it.
func namespace(t testing.TB, kube kubernetes.Interface, base string) string {
	t.Helper()
	name := perRun(base)
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Fresh clients: a test may have restarted the API server.
		vc, kube := clients(t)
		// Pods bound to no node are deleted at once; nothing holds
		// podgroups.
		if err := kube.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("cleanup: delete the pods in %s: %v", name, err)
		}
		if err := vc.SchedulingV1beta1().PodGroups(name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("cleanup: delete the podgroups in %s: %v", name, err)
		}
	})
	return name
}

// barePod is a pending pod for the volcano scheduler, which serve must
// give a PodGroup of its own.
func barePod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{
			Name: "main", Image: "registry.example/app:1",
		}}},
	}
}

// checkGrouping asserts the podgroup controller's invariants in a
// namespace: every pod carries the name of its own group and that group
// exists, exactly one group refers to each pod, and no group is orphaned
// (each one's owner pod exists). It returns a description of the first
// violation, or "" when all hold.
func checkGrouping(vc versioned.Interface, kube kubernetes.Interface, ns string, wantPods int) (string, error) {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	pgs, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	if len(pods.Items) != wantPods {
		return fmt.Sprintf("%d pods, want %d", len(pods.Items), wantPods), nil
	}
	groupsOf := map[string]int{}
	names := map[string]bool{}
	for _, pg := range pgs.Items {
		names[pg.Name] = true
		for _, ref := range pg.OwnerReferences {
			if ref.Kind == "Pod" {
				groupsOf[string(ref.UID)]++
			}
		}
	}
	uids := map[string]bool{}
	for _, pod := range pods.Items {
		uids[string(pod.UID)] = true
		want := podgroup.GroupName(&pod)
		if got := pod.Annotations[keys.KubeGroupName]; got != want {
			return fmt.Sprintf("pod %s annotated %q, want %q", pod.Name, got, want), nil
		}
		if !names[want] {
			return fmt.Sprintf("pod %s: group %s missing", pod.Name, want), nil
		}
		if n := groupsOf[string(pod.UID)]; n != 1 {
			return fmt.Sprintf("pod %s is owner of %d groups", pod.Name, n), nil
		}
	}
	for _, pg := range pgs.Items {
		owned := false
		for _, ref := range pg.OwnerReferences {
			owned = owned || uids[string(ref.UID)]
		}
		if !owned {
			return fmt.Sprintf("group %s is orphaned (owners %v)", pg.Name, pg.OwnerReferences), nil
		}
	}
	if len(pgs.Items) != wantPods {
		return fmt.Sprintf("%d groups for %d pods", len(pgs.Items), wantPods), nil
	}
	return "", nil
}

// queueCounts reads a queue's status counts.
func queueCounts(vc versioned.Interface, name string) (v1beta1.QueueStatus, error) {
	q, err := vc.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return v1beta1.QueueStatus{}, err
	}
	return q.Status, nil
}
