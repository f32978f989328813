// Package podgroup proves the podgroup controller against the real local
// API server. No kubelet, scheduler or kube-controller-manager runs: the
// tests create the workloads AND their pods (with owner references)
// themselves, and set the workload status the real controllers would set.
package podgroup

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane/cptest"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
)

// maxRequeue is the manager's --max-requeue-num in these tests: small, so
// that the dropped-request path is reached quickly.
const maxRequeue = 3

// priorityClass exists so that pods may name it (the Priority admission
// plugin rejects unknown classes).
const priorityClass = "pg-test-high"

var env struct {
	kube kubernetes.Interface
	vc   versioned.Interface
}

// TestMain shares one control plane and one in-process manager running only
// the podgroup controller; each test works in its own namespace. The manager
// is stopped, and has returned, before the control plane is.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	cp, err := cptest.StartWithCRDs(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "control plane:", err)
		return 1
	}
	defer func() { _ = cp.Stop() }()
	cfg := cp.AdminConfig()
	env.kube = kubernetes.NewForConfigOrDie(cfg)
	env.vc = versioned.NewForConfigOrDie(cfg)
	if _, err := env.kube.SchedulingV1().PriorityClasses().Create(context.Background(),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priorityClass}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, cfg, controller.Options{
			Controllers:             []string{"podgroup"},
			SchedulerNames:          []string{"volcano", "volcano-two"},
			InheritOwnerAnnotations: true,
			MaxRequeueNum:           maxRequeue,
			Workers:                 map[string]int{"podgroup": 2},
			FeatureGates:            framework.NewFeatureGate(),
		})
	}()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		code = 1
	}
	return code
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespace creates a namespace for the test, deleted at its end.
func namespace(t *testing.T) string {
	t.Helper()
	name := "pg-" + strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	if len(name) > 63 {
		name = name[:63]
	}
	ctx := context.Background()
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// eventually polls until cond holds. The limit only turns a hang into a
// failure; nothing here measures speed.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: never happened (last error: %v)", what, last)
	}
}

func res(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// podSpec is a one-container spec for the given scheduler.
func podSpec(scheduler string, req, lim corev1.ResourceList) corev1.PodSpec {
	return corev1.PodSpec{
		SchedulerName: scheduler,
		Containers: []corev1.Container{{
			Name: "main", Image: "registry.example/app:1",
			Resources: corev1.ResourceRequirements{Requests: req, Limits: lim},
		}},
	}
}

type podOpt func(*corev1.Pod)

func withAnnotations(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func withLabels(l map[string]string) podOpt {
	return func(p *corev1.Pod) { p.Labels = l }
}

// ownedBy makes the pod a replica of a workload, as its controller would.
func ownedBy(kind string, owner metav1.Object) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
	}
}

func createPod(t *testing.T, ns, name string, spec corev1.PodSpec, opts ...podOpt) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	for _, o := range opts {
		o(p)
	}
	out, err := env.kube.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func createReplicaSet(t *testing.T, ns, name string, replicas int32, annotations map[string]string, spec corev1.PodSpec) *appsv1.ReplicaSet {
	t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	out, err := env.kube.AppsV1().ReplicaSets(ns).Create(context.Background(), rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replicasOf creates the pods a ReplicaSet controller would create.
func replicasOf(t *testing.T, rs *appsv1.ReplicaSet, n int) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, createPod(t, rs.Namespace, fmt.Sprintf("%s-%d", rs.Name, i), rs.Spec.Template.Spec,
			withLabels(rs.Spec.Template.Labels), ownedBy("ReplicaSet", rs), func(p *corev1.Pod) {
				p.Annotations = rs.Spec.Template.Annotations
			}))
	}
	return pods
}

// groupOf waits until the pod is annotated and its group exists, checks
// that the annotation names the expected group, and returns the group.
func groupOf(t *testing.T, pod *corev1.Pod, want string) *v1beta1.PodGroup {
	t.Helper()
	var pg *v1beta1.PodGroup
	eventually(t, "pod "+pod.Name+" annotated and its group present", func(ctx context.Context) (bool, error) {
		p, err := env.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		name := p.Annotations[keys.KubeGroupName]
		if name == "" {
			return false, nil
		}
		if name != want {
			t.Fatalf("pod %s annotated with group %q, want %q", pod.Name, name, want)
		}
		pg, err = env.vc.SchedulingV1beta1().PodGroups(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil, err
	})
	return pg
}

// settled waits until the controller has handled a sentinel pod created
// after the objects under test. The work queue is FIFO, so by then the
// earlier pods have been taken by a worker (with two workers one may still
// be in flight, which could only hide a failure, never invent one); it
// proves the controller is alive and caught up, so a missing group
// afterwards is a decision, not a delay.
func settled(t *testing.T, ns string) {
	t.Helper()
	s := createPod(t, ns, "sentinel", podSpec("volcano", nil, nil))
	groupOf(t, s, "podgroup-"+string(s.UID))
}

// equalResources compares by value and key set.
func equalResources(t *testing.T, got *corev1.ResourceList, want corev1.ResourceList) {
	t.Helper()
	if got == nil {
		t.Fatalf("minResources missing, want %v", want)
	}
	for k, w := range want {
		g, ok := (*got)[k]
		if !ok || g.Cmp(w) != 0 {
			t.Errorf("minResources[%s] = %s (present %v), want %s", k, g.String(), ok, w.String())
		}
	}
	for k, g := range *got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected minResources[%s] = %s", k, g.String())
		}
	}
}

// warningFor waits for a Warning event with the reason on the object.
func warningFor(t *testing.T, ns, name, reason string) *corev1.Event {
	t.Helper()
	var ev *corev1.Event
	eventually(t, "Warning "+reason+" on "+name, func(ctx context.Context) (bool, error) {
		list, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
		})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if e := &list.Items[i]; e.Type == corev1.EventTypeWarning && e.Reason == reason {
				ev = e
				return true, nil
			}
		}
		return false, nil
	})
	return ev
}

func notFound(t *testing.T, ns, name string) {
	t.Helper()
	_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("podgroup %s/%s: want NotFound, got %v", ns, name, err)
	}
}
