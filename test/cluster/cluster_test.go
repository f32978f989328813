// Package cluster proves the local cluster that the other suites build on:
// each level of controlplane.Start runs what it says, and a stop leaves
// nothing running, mounted or wired on the machine.
package cluster

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func deployment(name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name: "main", Image: image, ImagePullPolicy: corev1.PullNever,
					}},
				},
			},
		},
	}
}

// TestControllersLevel: with kube-controller-manager and kube-scheduler, a
// new namespace gets its default ServiceAccount, a Deployment makes a
// ReplicaSet and pods (Pending: no node), and deleting the Deployment lets
// the garbage collector remove what it owned.
func TestControllersLevel(t *testing.T) {
	cp := cptest.StartLevel(t, controlplane.Controllers)
	ctx := ctxT(t)
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig())

	ns, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the default ServiceAccount of a new namespace", func() (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	})

	d, err := kube.AppsV1().Deployments(ns.Name).Create(ctx, deployment("web", 2, controlplane.PauseImage), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "two pods of the Deployment", func() (bool, error) {
		pods, err := kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 2, err
	})
	if err := kube.AppsV1().Deployments(ns.Name).Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the garbage collector to remove the ReplicaSet and pods", func() (bool, error) {
		rs, err := kube.AppsV1().ReplicaSets(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		return err == nil && len(rs.Items) == 0 && len(pods.Items) == 0, err
	})
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the namespace to be deleted", func() (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// TestNodeLevel: the node registers Ready and untainted, runs a
// Deployment's pods on the pod network with their ServiceAccount token
// mounted, the kubernetes Service is served by the API server on the
// node's address, and a stop leaves no process, mount, bridge or rule.
func TestNodeLevel(t *testing.T) {
	cptest.RequireNode(t)
	cp, err := cptest.StartWithCRDs(context.Background(), controlplane.Node)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cp.Stop()
		}
	})
	ctx := ctxT(t)
	kube := kubernetes.NewForConfigOrDie(cp.AdminConfig())

	node, err := kube.CoreV1().Nodes().Get(ctx, controlplane.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(node.Spec.Taints) != 0 {
		t.Errorf("node taints: %v", node.Spec.Taints)
	}
	eps, err := kube.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.Items) == 0 || len(eps.Items[0].Endpoints) == 0 || eps.Items[0].Endpoints[0].Addresses[0] != controlplane.NodeIP {
		t.Errorf("the kubernetes Service should lead to %s: %+v", controlplane.NodeIP, eps.Items)
	}

	if _, err := kube.AppsV1().Deployments("default").Create(ctx, deployment("sleeper", 2, controlplane.PauseImage), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods *corev1.PodList
	poll(t, ctx, "two Running pods on the node", func() (bool, error) {
		pods, err = kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=sleeper"})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == controlplane.NodeName {
				running++
			}
		}
		return running == 2, nil
	})
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Status.PodIP, "10.244.0.") {
			t.Errorf("pod %s has IP %q, not one of the pod network %s", p.Name, p.Status.PodIP, controlplane.PodCIDR)
		}
		token := false
		for _, v := range p.Spec.Volumes {
			if v.Projected != nil && strings.HasPrefix(v.Name, "kube-api-access-") {
				token = true
			}
		}
		if !token {
			t.Errorf("pod %s has no ServiceAccount token volume", p.Name)
		}
	}
	if len(controlplane.NodeProcesses()) == 0 {
		t.Fatal("no node process found while the node runs: the leftover check below would prove nothing")
	}
	if m, _ := controlplane.NodeMounts(); len(m) == 0 {
		t.Fatal("no node mount found while pods run: the leftover check below would prove nothing")
	}
	if len(controlplane.KubeChains()) == 0 {
		t.Fatal("no KUBE-* iptables chain found while the node runs: the leftover check below would prove nothing")
	}

	stopped = true
	// The checks below look at the whole machine: the node lock stays held
	// until they are done, or another test binary's node, free to start
	// once the lock is released, would be taken for this one's leftovers.
	release, err := cp.StopHoldingNodeLock()
	defer release()
	if err != nil {
		t.Fatalf("stop: %v", err)
	}
	if held, err := controlplane.NodeLocked(); !held {
		t.Fatalf("the node lock is not held after StopHoldingNodeLock (%v): another node could start while the machine is checked", err)
	}
	if pids := controlplane.NodeProcesses(); len(pids) != 0 {
		t.Errorf("node processes left running: %v", pids)
	}
	if m, err := controlplane.NodeMounts(); err != nil || len(m) != 0 {
		t.Errorf("mounts left: %v %v", m, err)
	}
	if _, err := os.Stat("/sys/class/net/kvc0"); err == nil {
		t.Error("the pod bridge kvc0 is left")
	}
	if left := controlplane.KubeChains(); len(left) != 0 {
		t.Errorf("iptables chains left: %v", left)
	}
}

func poll(t *testing.T, ctx context.Context, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond()
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
