// Package topology runs 'kubectl vc hypernode' and the topology findings
// of 'why' and 'doctor' as a user runs them: the built binary against the
// real local API server, with Nodes, pods bound to them and HyperNodes as
// Volcano's CRD defines them. No scheduler runs here (docs/topology.md
// records the run against Volcano's real one); the tests check what the
// commands read and resolve.
package topology

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

var env struct {
	cli        *binary.CLI
	vc         versioned.Interface
	kube       kubernetes.Interface
	kubeconfig string
	dir        string
	// withPlugin is a scheduler configuration file that enables the
	// network-topology-aware plugin; withoutPlugin one that does not.
	withPlugin, withoutPlugin string
}

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		var err error
		if env.cli, err = binary.NewCLI(e); err != nil {
			return err
		}
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		env.kubeconfig, env.dir = e.Kubeconfig, e.Dir
		conf := func(name, plugins string) (string, error) {
			p := filepath.Join(e.Dir, name)
			return p, os.WriteFile(p, []byte("actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: overcommit\n  - name: predicates\n  - name: proportion\n"+plugins), 0o600)
		}
		if env.withPlugin, err = conf("with.conf", "  - name: network-topology-aware\n"); err != nil {
			return err
		}
		env.withoutPlugin, err = conf("without.conf", "")
		return err
	}})
}

// world is one test's names: HyperNodes and Nodes are cluster-scoped, so
// each test's are its own and deleted when it ends.
type world struct {
	t    *testing.T
	name string
}

func newWorld(t *testing.T) *world {
	return &world{t: t, name: namespaces.RunName(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")))}
}

func (w *world) n(suffix string) string { return w.name + "-" + suffix }

// ns creates the world's namespace.
func (w *world) ns() string {
	n := w.n("ns")
	namespaces.Create(w.t, env.kube, env.vc, n)
	return n
}

// node creates a Ready Node with cpu allocatable and labels, as a kubelet
// registers it (status written through the status subresource).
func (w *world) node(suffix, cpu string, labels map[string]string) string {
	w.t.Helper()
	ctx := context.Background()
	name := w.n(suffix)
	n, err := env.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = env.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n.Status = corev1.NodeStatus{Capacity: res, Allocatable: res,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
	if _, err := env.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	return name
}

// hyperNode creates a HyperNode of the world.
func (w *world) hyperNode(suffix string, tier int, tierName string, members ...topologyv1alpha1.MemberSpec) string {
	w.t.Helper()
	name := w.n(suffix)
	if _, err := env.vc.TopologyV1alpha1().HyperNodes().Create(context.Background(), &topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: topologyv1alpha1.HyperNodeSpec{Tier: tier, TierName: tierName, Members: members}}, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = env.vc.TopologyV1alpha1().HyperNodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// queue creates an Open queue of the world.
func (w *world) queue() string {
	w.t.Helper()
	n := w.n("q")
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

func exact(t topologyv1alpha1.MemberType, name string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: t, Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: name}}}
}

func regex(p string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{RegexMatch: &topologyv1alpha1.RegexMatch{Pattern: p}}}
}

func label(k, v string) topologyv1alpha1.MemberSpec {
	return topologyv1alpha1.MemberSpec{Type: topologyv1alpha1.MemberTypeNode, Selector: topologyv1alpha1.MemberSelector{LabelMatch: &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}}}
}

const (
	nodeM = topologyv1alpha1.MemberTypeNode
	hnM   = topologyv1alpha1.MemberTypeHyperNode
)

// group creates a PodGroup with minResources cpu and a network topology.
func group(t *testing.T, ns, name, queue string, cpu string, nt *schedulingv1beta1.NetworkTopologySpec, phase schedulingv1beta1.PodGroupPhase) {
	t.Helper()
	ctx := context.Background()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: queue, NetworkTopology: nt,
			MinResources: &corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		// PodGroups have no status subresource: the phase is written with
		// the object, as the scheduler's updates do.
		Status: schedulingv1beta1.PodGroupStatus{Phase: phase}}
	if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pod creates a member pod of grp requesting cpu; node "" leaves it
// Pending, otherwise it is bound there and Running, as a kubelet reports.
func pod(t *testing.T, ns, name, grp, cpu, node string, annotations ...string) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	an := map[string]string{}
	if grp != "" {
		an[keys.KubeGroupName] = grp
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		an[annotations[i]] = annotations[i+1]
	}
	p, err := env.kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: an},
		Spec: corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{Name: "main", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node == "" {
		return p
	}
	if err := env.kube.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p, err = env.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if p, err = env.kube.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// why runs 'why ARGS -o json' with kubeconfig and returns the report and
// the exit code.
func why(t *testing.T, kubeconfig string, args ...string) (analysis.Report, int) {
	t.Helper()
	r := env.cli.Run(t, kubeconfig, append(append([]string{"why"}, args...), "-o", "json")...)
	var rep analysis.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("why %v -o json: %v\n%s", args, err, r)
	}
	text := env.cli.Run(t, kubeconfig, append([]string{"why"}, args...)...)
	t.Logf("$ kubectl vc why %s\n%s%s", strings.Join(args, " "), text.Stdout, text.Stderr)
	return rep, r.Code
}

// reason returns the reason of that code, nil when absent.
func reason(rep analysis.Report, code analysis.Code) *analysis.Reason {
	for i := range rep.Reasons {
		if rep.Reasons[i].Reason == code {
			return &rep.Reasons[i]
		}
	}
	return nil
}

// has checks that the report has the reason, blocking or not, whose
// message and evidence hold every sub.
func has(t *testing.T, rep analysis.Report, code analysis.Code, blocking bool, subs ...string) {
	t.Helper()
	r := reason(rep, code)
	if r == nil {
		t.Errorf("no %s in %+v", code, rep.Reasons)
		return
	}
	if r.Blocking != blocking {
		t.Errorf("%s blocking %v, want %v", code, r.Blocking, blocking)
	}
	all := r.Message + " " + strings.Join(r.Evidence, " ")
	for _, s := range subs {
		if !strings.Contains(all, s) {
			t.Errorf("%s lacks %q: %s", code, s, all)
		}
	}
}

// checked returns the OK line of a check holding sub, "" when none.
func checked(rep analysis.Report, check, sub string) string {
	for _, c := range rep.Checked {
		if c.Check == check && strings.Contains(c.Message, sub) {
			return c.Message
		}
	}
	return ""
}

// grantAlice lets the unprivileged user read what 'why' and 'hypernode'
// read, except nodes: pods, events and podgroups in ns, and HyperNodes,
// queues and podgroups everywhere.
func grantAlice(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	name := ns + "-alice"
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{topologyv1alpha1.GroupName}, Resources: []string{"hypernodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{schedulingv1beta1.GroupName}, Resources: []string{"queues", "podgroups"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := env.kube.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subj := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: controlplane.UnprivilegedUser}}
	if _, err := env.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: subj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.kube.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := env.kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: ns},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read"}, Subjects: subj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
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
