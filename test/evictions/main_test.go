// Package evictions runs 'kubectl vc evictions' (and the eviction history
// of 'why') as a user runs them, the built binary against the real local
// API server. No scheduler runs here: the tests write the records Volcano's
// scheduler writes when it evicts, each helper naming the function of
// volcano-sh/volcano whose writes it copies (pkg/scheduler/cache/cache.go).
package evictions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

var env struct {
	cli  *binary.CLI
	vc   versioned.Interface
	kube kubernetes.Interface
}

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		var err error
		if env.cli, err = binary.NewCLI(e); err != nil {
			return err
		}
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		return nil
	}})
}

// world is one test's names: its namespaces, queues, classes and nodes
// are its own, so that no test's records match another's.
type world struct {
	t    *testing.T
	name string
}

func newWorld(t *testing.T) *world {
	return &world{t: t, name: namespaces.RunName(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")))}
}

// ns creates the namespace of the world named suffix.
func (w *world) ns(suffix string) string {
	n := w.name + "-" + suffix
	namespaces.Create(w.t, env.kube, env.vc, n)
	return n
}

// node is a node name of the world; no Node object is needed, the records
// only name it.
func (w *world) node(suffix string) string { return w.name + "-" + suffix }

// class creates a PriorityClass of the world.
func (w *world) class(suffix string, value int32) string {
	w.t.Helper()
	n := w.name + "-" + suffix
	if _, err := env.kube.SchedulingV1().PriorityClasses().Create(context.Background(),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: n}, Value: value}, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = env.kube.SchedulingV1().PriorityClasses().Delete(context.Background(), n, metav1.DeleteOptions{})
	})
	return n
}

// queue creates an Open queue of the world.
func (w *world) queue(suffix string) string {
	w.t.Helper()
	n := w.name + "-" + suffix
	q, err := env.vc.SchedulingV1beta1().Queues().Create(context.Background(), &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: n},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: keys.RootQueue}}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	q.Status.State = schedulingv1beta1.QueueStateOpen
	if _, err := env.vc.SchedulingV1beta1().Queues().UpdateStatus(context.Background(), q, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = env.vc.SchedulingV1beta1().Queues().Delete(context.Background(), n, metav1.DeleteOptions{})
	})
	return n
}

// group creates a PodGroup in queue with the priority class.
func group(t *testing.T, ns, name, queue, class string, minMember int32, phase schedulingv1beta1.PodGroupPhase) {
	t.Helper()
	_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: minMember, Queue: queue, PriorityClassName: class},
		Status:     schedulingv1beta1.PodGroupStatus{Phase: phase}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// pod creates a pod of the group with the priority class; node "" leaves
// it pending.
func pod(t *testing.T, ns, name, grp, class string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{keys.KubeGroupName: grp}},
		Spec: corev1.PodSpec{SchedulerName: "volcano", PriorityClassName: class, Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	p, err := env.kube.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// bind places a pod as Volcano's scheduler does (cache.SchedulerCache.Bind:
// the binding, then a Normal "Scheduled" event "Successfully assigned
// NS/NAME to NODE"); the pod then runs, as its kubelet reports.
func bind(t *testing.T, p *corev1.Pod, node string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	if err := env.kube.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	record(t, p, "Pod", "v1", corev1.EventTypeNormal, "Scheduled", fmt.Sprintf("Successfully assigned %s/%s to %s", p.Namespace, p.Name, node))
	p, err := env.kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if p, err = env.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// evict writes what Volcano's scheduler writes when it evicts victim for
// action: cache.defaultEvictor.Evict (the Warning event "Evict" "Pod is
// evicted, because of ACTION" on the pod, its Ready=False and
// DisruptionTarget=True conditions in one status update, then the pod's
// deletion, which its kubelet completes), and cache.SchedulerCache.Evict
// (the Normal event "Evict" on the pod's PodGroup, message the action).
func evict(t *testing.T, victim *corev1.Pod, action string) {
	t.Helper()
	ctx := context.Background()
	msg := infer.EvictMessagePrefix + action
	record(t, victim, "Pod", "v1", corev1.EventTypeWarning, infer.EvictReason, msg)
	p, err := env.kube.CoreV1().Pods(victim.Namespace).Get(ctx, victim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	p.Status.Conditions = append(p.Status.Conditions,
		corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: infer.EvictReason, Message: msg, LastTransitionTime: now},
		corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler,
			Message: "volcano: preempting to accommodate a higher priority pod", LastTransitionTime: now})
	if p, err = env.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The scheduler deletes with the pod's grace period; no kubelet runs
	// here to end it, so the deletion is completed at once, as the kubelet
	// would.
	if err := env.kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	pg, err := env.vc.SchedulingV1beta1().PodGroups(p.Namespace).Get(ctx, p.Annotations[keys.KubeGroupName], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	record(t, pg, "PodGroup", "scheduling.volcano.sh/v1beta1", corev1.EventTypeNormal, infer.EvictReason, action)
}

// pipelined writes what Volcano's scheduler writes on the preemptor when
// its session closes (cache.SchedulerCache.taskUnschedulable, with the
// message of api.JobInfo.TaskSchedulingReason for a Pipelined task):
// status.nominatedNodeName, the PodScheduled=False condition and the
// Warning event FailedScheduling.
func pipelined(t *testing.T, p *corev1.Pod, node string) {
	t.Helper()
	ctx := context.Background()
	msg := fmt.Sprintf("Pod %s/%s can possibly be assigned to %s, once resource is released and minAvailable is satisfied", p.Namespace, p.Name, node)
	cur, err := env.kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Status.NominatedNodeName = node
	cur.Status.Conditions = append(cur.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: msg, LastTransitionTime: metav1.Now()})
	record(t, cur, "Pod", "v1", corev1.EventTypeWarning, infer.FailedScheduling, msg)
	if _, err := env.kube.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// record writes an event as client-go's legacy recorder in Volcano's
// scheduler does: source component "volcano", count 1, first and last
// timestamps now.
func record(t *testing.T, obj metav1.Object, kind, apiVersion, typ, reason, msg string) {
	t.Helper()
	now := metav1.Now()
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", obj.GetName(), time.Now().UnixNano()), Namespace: obj.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
		Reason: reason, Message: msg, Type: typ, Count: 1,
		Source:         corev1.EventSource{Component: "volcano"},
		FirstTimestamp: now, LastTimestamp: now,
	}
	if _, err := env.kube.CoreV1().Events(obj.GetNamespace()).Create(context.Background(), e, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// list runs 'evictions ARGS -o json' as the admin and returns its items,
// failing unless it exits 0.
func list(t *testing.T, args ...string) evictions.List {
	t.Helper()
	r := env.cli.VC(t, append(append([]string{"evictions"}, args...), "-o", "json")...)
	if r.Code != 0 {
		t.Fatalf("evictions %v: %s", args, r)
	}
	var l evictions.List
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatalf("evictions %v -o json: %v\n%s", args, err, r)
	}
	text := env.cli.VC(t, append([]string{"evictions"}, args...)...)
	t.Logf("$ kubectl vc evictions %s\n%s%s", strings.Join(args, " "), text.Stdout, text.Stderr)
	return l
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}
