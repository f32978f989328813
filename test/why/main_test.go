// Package why runs 'kubectl vc why' as a user runs it (the built binary)
// against the real local API server. No scheduler or controller runs here:
// the tests write what Volcano's would — the scheduler's leader Lease
// (renewed while the tests run), its PodGroup conditions and Events, a
// queue's status.allocated through the status subresource — and one node
// as a kubelet reports it.
package why

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// controllers is where the leader Leases live, as in a Volcano install.
const controllers = "volcano-system"

var env struct {
	cp    *controlplane.ControlPlane
	dir   string
	bin   string
	admin string
	vc    versioned.Interface
	kube  kubernetes.Interface
}

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		env.cp, env.dir, env.bin, env.admin = e.CP, e.Dir, e.Binary, e.Kubeconfig
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		ctx := context.Background()
		for _, ns := range []string{controllers} {
			if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		if err := makeNode(ctx, "node-1", "cpu=8,memory=32Gi,pods=110"); err != nil {
			return err
		}
		// Volcano's scheduler holds its Lease, named after its scheduler
		// name, and renews it every 2 s as leader election does.
		stop := make(chan struct{})
		done := make(chan struct{})
		if err := renewLease(ctx, "volcano"); err != nil {
			return err
		}
		go func() {
			defer close(done)
			t := time.NewTicker(2 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					_ = renewLease(ctx, "volcano")
				}
			}
		}()
		e.Cleanup(func() error { close(stop); <-done; return nil })
		return nil
	}})
}

// renewLease writes the Lease of a leader that holds it now.
func renewLease(ctx context.Context, name string) error {
	now := metav1.NewMicroTime(time.Now())
	leases := env.kube.CoordinationV1().Leases(controllers)
	l, err := leases.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: controllers},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name + "-scheduler-7d9f_1b2c"), LeaseDurationSeconds: ptr.To[int32](15),
				AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To[int32](0)}}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

// makeNode registers a Ready node with that allocatable, as a kubelet does.
func makeNode(ctx context.Context, name, allocatable string) error {
	n, err := env.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	n.Status.Capacity = rl(allocatable)
	n.Status.Allocatable = rl(allocatable)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	_, err = env.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

func rl(s string) corev1.ResourceList {
	out := corev1.ResourceList{}
	if s == "" {
		return out
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

type result = binary.Result

func command(args ...string) *exec.Cmd { return binary.Command(env.bin, env.dir, env.admin, args...) }

func vc(t *testing.T, args ...string) result {
	t.Helper()
	return binary.Run(t, command(args...))
}

// why runs 'why ARGS -o json' and its text form, checks the exit code
// against the report (1 when blocked, with one line on stderr; else 0),
// records the text output for docs/why.md when KUBECTL_VC_DOCS_OUT is set,
// and returns the report.
func why(t *testing.T, args ...string) analysis.Report {
	t.Helper()
	r := vc(t, append(append([]string{"why"}, args...), "-o", "json")...)
	var rep analysis.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("why %v -o json: %v\n%s", args, err, r)
	}
	text := vc(t, append([]string{"why"}, args...)...)
	t.Logf("$ kubectl vc why %s\n%s%s(exit %d)", strings.Join(args, " "), text.Stdout, text.Stderr, text.Code)
	if rep.Blocked {
		if r.Code != 1 || text.Code != 1 || strings.Count(strings.TrimRight(r.Stderr, "\n"), "\n") != 0 || !strings.HasPrefix(r.Stderr, "error: ") || !strings.Contains(r.Stderr, "is blocked") {
			t.Errorf("blocked: want exit 1 and one line on stderr:\n%s", r)
		}
	} else if r.Code != 0 || text.Code != 0 || r.Stderr != "" {
		t.Errorf("not blocked: want exit 0 and nothing on stderr:\n%s", r)
	}
	if out := os.Getenv("KUBECTL_VC_DOCS_OUT"); out != "" {
		_ = os.MkdirAll(out, 0o755)
		f, err := os.OpenFile(filepath.Join(out, "why.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "### %s\n$ kubectl vc why %s\n%s%s(exit %d)\n\n", t.Name(), strings.Join(args, " "), text.Stdout, text.Stderr, text.Code)
			j, _ := json.MarshalIndent(rep, "", "  ")
			fmt.Fprintf(f, "$ kubectl vc why %s -o json\n%s\n\n", strings.Join(args, " "), j)
			f.Close()
		}
	}
	return rep
}

// reason returns the report's reason of that code, failing the test when
// it is missing or does not block as want says.
func reason(t *testing.T, rep analysis.Report, code analysis.Code, blocking bool) analysis.Reason {
	t.Helper()
	for _, r := range rep.Reasons {
		if r.Reason == code {
			if r.Blocking != blocking {
				t.Errorf("%s blocking=%v, want %v: %+v", code, r.Blocking, blocking, r)
			}
			return r
		}
	}
	t.Fatalf("no reason %s in %+v", code, rep.Reasons)
	return analysis.Reason{}
}

// onlyBlocking checks the blocking codes, in order.
func onlyBlocking(t *testing.T, rep analysis.Report, want ...analysis.Code) {
	t.Helper()
	got := rep.Blocking()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("blocking reasons %v, want %v\n%+v", got, want, rep.Reasons)
	}
}

func contains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}

// namespace creates a namespace named after the test, for this run of it,
// emptied and deleted after it (internal/testenv/namespaces); the first run
// keeps the plain name docs/why.md shows.
func namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	return namespaces.PerRun(t, env.kube, env.vc, strings.TrimRight(name, "-"))
}

// createNamespace creates the namespace name, emptied and deleted after the
// test.
func createNamespace(t *testing.T, name string) {
	t.Helper()
	namespaces.Create(t, env.kube, env.vc, name)
}

// queueSpec is a queue as a user creates it.
type queueSpec struct {
	parent, capability, deserved string
}

// makeQueue creates a queue and writes its status as Volcano writes it:
// state (the queue controller) and allocated (the scheduler, through the
// status subresource).
func makeQueue(t *testing.T, name string, spec queueSpec, state schedulingv1beta1.QueueState, allocated string) *schedulingv1beta1.Queue {
	t.Helper()
	ctx := context.Background()
	parent := spec.parent
	if parent == "" {
		parent = keys.RootQueue
	}
	q, err := env.vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: parent, Capability: rl(spec.capability), Deserved: rl(spec.deserved)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status.State = state
	q.Status.Allocated = rl(allocated)
	if q, err = env.vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.vc.SchedulingV1beta1().Queues().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return q
}

// makeGroup creates a PodGroup (minResources "" for none) in phase; its
// status is written with the object (PodGroup has no status subresource).
func makeGroup(t *testing.T, ns, name, queue string, minMember int32, minResources string, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	t.Helper()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:   schedulingv1beta1.PodGroupSpec{MinMember: minMember, Queue: queue},
		Status: schedulingv1beta1.PodGroupStatus{Phase: phase}}
	if minResources != "" {
		pg.Spec.MinResources = ptr.To(rl(minResources))
	}
	pg, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), pg, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

// updateGroup changes a PodGroup as the scheduler does: one update of the
// whole object.
func updateGroup(t *testing.T, pg *schedulingv1beta1.PodGroup, change func(*schedulingv1beta1.PodGroup)) *schedulingv1beta1.PodGroup {
	t.Helper()
	cur, err := env.vc.SchedulingV1beta1().PodGroups(pg.Namespace).Get(context.Background(), pg.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(cur)
	if cur, err = env.vc.SchedulingV1beta1().PodGroups(pg.Namespace).Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cur
}

// makePod creates a pod of group (none when empty) for scheduler, asking
// for cpu; node "" leaves it unplaced.
func makePod(t *testing.T, ns, name, group, scheduler, cpu, node string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{}},
		Spec: corev1.PodSpec{SchedulerName: scheduler, NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Requests: rl("cpu=" + cpu)}}}}}
	if group != "" {
		p.Annotations[keys.KubeGroupName] = group
	}
	p, err := env.kube.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node != "" {
		p.Status.Phase = corev1.PodRunning
		if p, err = env.kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// schedulerEvent records an event as Volcano's scheduler does: source
// component "volcano", count and timestamps of client-go's recorder.
func schedulerEvent(t *testing.T, obj runtimeObject, kind, apiVersion, typ, reason, msg string, count int32) {
	t.Helper()
	now := metav1.Now()
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", obj.GetName(), time.Now().UnixNano()), Namespace: obj.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: obj.GetNamespace(), Name: obj.GetName(),
			UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
		Reason: reason, Message: msg, Type: typ, Count: count,
		Source:         corev1.EventSource{Component: "volcano"},
		FirstTimestamp: metav1.NewTime(now.Add(-time.Duration(count) * time.Second)), LastTimestamp: now,
		ReportingController: "volcano", ReportingInstance: "volcano-scheduler-7d9f",
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
		e.Namespace = ns
	}
	if _, err := env.kube.CoreV1().Events(ns).Create(context.Background(), e, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

type runtimeObject = metav1.Object
