package evictions

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
)

// preempt (actions/preempt): a pod of higher priority in the same queue
// takes the node of a running one.
func TestPreemptWithinQueue(t *testing.T) {
	w := newWorld(t)
	ns, q, node := w.ns("a"), w.queue("q"), w.node("n1")
	low, high := w.class("low", 10), w.class("high", 1000)
	group(t, ns, "batch", q, low, 1, schedulingv1beta1.PodGroupRunning)
	group(t, ns, "urgent", q, high, 1, schedulingv1beta1.PodGroupInqueue)
	victim := bind(t, pod(t, ns, "batch-0", "batch", low), node)
	preemptor := pod(t, ns, "urgent-0", "urgent", high)
	evict(t, victim, infer.Preempt)
	pipelined(t, preemptor, node)

	l := list(t, "-n", ns)
	if len(l.Items) != 1 {
		t.Fatalf("want one eviction, got %+v", l.Items)
	}
	ev := l.Items[0]
	if ev.Action != infer.Preempt || ev.Victim != "batch-0" || ev.VictimUID != victim.UID || ev.Group != "batch" || ev.Queue != q || ev.Node != node {
		t.Errorf("eviction: %+v", ev)
	}
	f := ev.For
	if f == nil || !f.Inferred || f.Pod != "urgent-0" || f.Group != "urgent" || f.Queue != q || f.Priority == nil || *f.Priority != 1000 {
		t.Fatalf("for: %+v; unknown: %q", f, ev.Unknown)
	}
	contains(t, "evidence", strings.Join(f.Evidence, "\n"), "same node "+node, "once resource is released", "its priority 1000 above the victim's 10", "same queue "+q)

	text := env.cli.MustVC(t, "evictions", "-n", ns)
	contains(t, "table", text.Stdout, "TIME", "ACTION", "VICTIM", "GROUP", "QUEUE", "NODE", "FOR", "preempt", "batch-0",
		"pod "+ns+"/urgent-0 (group urgent, queue "+q+", priority 1000) [inferred]")
	wide := env.cli.MustVC(t, "evictions", "-n", ns, "-o", "wide")
	contains(t, "wide", wide.Stdout, "EVIDENCE", "same node "+node)

	// The describe pages: the evictions a podgroup and a queue suffered
	// and caused.
	d := env.cli.MustVC(t, "podgroup", "describe", "batch", "-n", ns)
	t.Logf("$ kubectl vc podgroup describe batch -n %s\n%s", ns, d.Stdout)
	contains(t, "podgroup describe batch", d.Stdout, "Evictions Suffered:", "preempt", ns+"/batch-0", "urgent-0")
	d = env.cli.MustVC(t, "podgroup", "describe", "urgent", "-n", ns)
	contains(t, "podgroup describe urgent", after(d.Stdout, "Evictions Caused:"), ns+"/batch-0", "pod "+ns+"/urgent-0 [inferred]")
	d = env.cli.MustVC(t, "queue", "describe", q)
	t.Logf("$ kubectl vc queue describe %s\n%s", q, d.Stdout)
	contains(t, "queue describe", after(d.Stdout, "Evictions Suffered:"), ns+"/batch-0")
	contains(t, "queue describe", after(d.Stdout, "Evictions Caused:"), ns+"/batch-0")
}

// after is s from the first line that holds sub.
func after(s, sub string) string {
	if i := strings.Index(s, sub); i >= 0 {
		return s[i:]
	}
	return ""
}

// reclaim (actions/reclaim): a queue below its deserved share takes back
// from another queue, whatever the priorities; the preemptor is another
// team's, in another namespace.
func TestReclaimAcrossQueues(t *testing.T) {
	w := newWorld(t)
	nsA, nsB, qa, qb, node := w.ns("a"), w.ns("b"), w.queue("qa"), w.queue("qb"), w.node("n1")
	high, low := w.class("high", 1000), w.class("low", 10)
	group(t, nsA, "borrower", qa, high, 1, schedulingv1beta1.PodGroupRunning)
	group(t, nsB, "owner", qb, low, 1, schedulingv1beta1.PodGroupInqueue)
	victim := bind(t, pod(t, nsA, "borrower-0", "borrower", high), node)
	preemptor := pod(t, nsB, "owner-0", "owner", low)
	evict(t, victim, infer.Reclaim)
	pipelined(t, preemptor, node)

	for _, args := range [][]string{{"-n", nsA}, {"-A", "--queue", qa}, {"-A", "--queue", qb}} {
		l := list(t, args...)
		if len(l.Items) != 1 {
			t.Fatalf("%v: want one eviction, got %+v", args, l.Items)
		}
		ev := l.Items[0]
		if ev.Action != infer.Reclaim || ev.Queue != qa || ev.For == nil || ev.For.Namespace != nsB || ev.For.Pod != "owner-0" || ev.For.Queue != qb {
			t.Fatalf("%v: %+v for %+v", args, ev, ev.For)
		}
		contains(t, "evidence", strings.Join(ev.For.Evidence, "\n"), "its queue "+qb+" reclaims from the victim's queue "+qa)
	}
	text := env.cli.MustVC(t, "evictions", "-A", "--queue", qa)
	contains(t, "table", text.Stdout, "NAMESPACE", nsA, "reclaim", "pod "+nsB+"/owner-0 (group owner, queue "+qb)
}

// gangpreempt (actions/gangpreempt): a gang of two evicts a gang of two,
// one pod on each node.
func TestGangPreempt(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns("a"), w.queue("q")
	n1, n2 := w.node("n1"), w.node("n2")
	low, high := w.class("low", 1), w.class("high", 100)
	group(t, ns, "train", q, low, 2, schedulingv1beta1.PodGroupRunning)
	group(t, ns, "serve", q, high, 2, schedulingv1beta1.PodGroupInqueue)
	v0, v1 := bind(t, pod(t, ns, "train-0", "train", low), n1), bind(t, pod(t, ns, "train-1", "train", low), n2)
	p0, p1 := pod(t, ns, "serve-0", "serve", high), pod(t, ns, "serve-1", "serve", high)
	evict(t, v0, infer.GangPreempt)
	evict(t, v1, infer.GangPreempt)
	pipelined(t, p0, n1)
	pipelined(t, p1, n2)

	l := list(t, "-n", ns)
	if len(l.Items) != 2 {
		t.Fatalf("want two evictions, got %+v", l.Items)
	}
	got := map[string]string{}
	for _, ev := range l.Items {
		if ev.Action != infer.GangPreempt || ev.For == nil {
			t.Fatalf("%+v", ev)
		}
		got[ev.Victim+"@"+ev.Node] = ev.For.Pod
	}
	if got["train-0@"+n1] != "serve-0" || got["train-1@"+n2] != "serve-1" {
		t.Errorf("victim -> preemptor: %v", got)
	}
}

// A Volcano Job's evicted pod is recreated by the job controller under the
// same name: the eviction is the old pod's (its UID), on its old node,
// while the new pod waits elsewhere.
func TestJobPodRecreatedUnderTheSameName(t *testing.T) {
	w := newWorld(t)
	ns, q := w.ns("a"), w.queue("q")
	n1, n2 := w.node("n1"), w.node("n2")
	low, high := w.class("low", 1), w.class("high", 100)
	group(t, ns, "train", q, low, 1, schedulingv1beta1.PodGroupRunning)
	group(t, ns, "urgent", q, high, 1, schedulingv1beta1.PodGroupInqueue)
	old := bind(t, pod(t, ns, "train-worker-0", "train", low), n1)
	preemptor := pod(t, ns, "urgent-0", "urgent", high)
	evict(t, old, infer.Preempt)
	pipelined(t, preemptor, n1)
	recreated := bind(t, pod(t, ns, "train-worker-0", "train", low), n2)

	l := list(t, "-n", ns)
	if len(l.Items) != 1 {
		t.Fatalf("want one eviction, got %+v", l.Items)
	}
	ev := l.Items[0]
	if ev.VictimUID != old.UID || ev.VictimUID == recreated.UID || ev.Node != n1 || ev.Group != "train" || ev.For == nil || ev.For.Pod != "urgent-0" {
		t.Errorf("%+v for %+v", ev, ev.For)
	}
	contains(t, "evidence", strings.Join(ev.Evidence, "\n"), "recreated under the same name")
}

// Events expire (kube-apiserver --event-ttl, one hour by default): with
// the preemptor's records gone the row says so; with the victim's event
// gone but the pod kept (a finalizer), its conditions are the record.
func TestExpiredEvents(t *testing.T) {
	w := newWorld(t)
	ns, q, node := w.ns("a"), w.queue("q"), w.node("n1")
	low := w.class("low", 1)
	group(t, ns, "batch", q, low, 1, schedulingv1beta1.PodGroupRunning)
	victim := bind(t, pod(t, ns, "batch-0", "batch", low), node)
	evict(t, victim, infer.Preempt) // no preemptor record: expired

	l := list(t, "-n", ns)
	if len(l.Items) != 1 || l.Items[0].For != nil {
		t.Fatalf("%+v", l.Items)
	}
	contains(t, "unknown", strings.Join(l.Items[0].Unknown, "\n"), "may have expired")
	text := env.cli.MustVC(t, "evictions", "-n", ns)
	contains(t, "table", text.Stdout, "<unknown: see -o wide>")

	// No event at all left: nothing to list, and the command says why.
	for _, e := range listEvents(t, ns) {
		_ = env.kube.CoreV1().Events(ns).Delete(context.Background(), e, metav1.DeleteOptions{})
	}
	r := env.cli.MustVC(t, "evictions", "-n", ns)
	if r.Stdout != "" {
		t.Errorf("stdout: %s", r.Stdout)
	}
	contains(t, "stderr", r.Stderr, "No evictions found in "+ns+" namespace", "events are kept 1h0m0s by default")
}

func listEvents(t *testing.T, ns string) []string {
	t.Helper()
	evs, err := env.kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range evs.Items {
		names = append(names, e.Name)
	}
	return names
}

// A user who may read only their namespace sees its evictions; a
// preemptor in a namespace they cannot read is not guessed: the row and
// stderr say so. -A is refused in one line.
func TestUserWhoMayReadOnlyTheirNamespace(t *testing.T) {
	w := newWorld(t)
	nsA, nsB, qa, qb, node := w.ns("a"), w.ns("b"), w.queue("qa"), w.queue("qb"), w.node("n1")
	c := w.class("c", 1)
	group(t, nsA, "borrower", qa, c, 1, schedulingv1beta1.PodGroupRunning)
	group(t, nsB, "owner", qb, c, 1, schedulingv1beta1.PodGroupInqueue)
	victim := bind(t, pod(t, nsA, "borrower-0", "borrower", c), node)
	preemptor := pod(t, nsB, "owner-0", "owner", c)
	evict(t, victim, infer.Reclaim)
	pipelined(t, preemptor, node)
	grantRead(t, nsA)

	r := env.cli.Run(t, env.cli.Alice, "evictions", "-n", nsA, "-o", "wide")
	if r.Code != 0 {
		t.Fatalf("%s", r)
	}
	contains(t, "stdout", r.Stdout, "borrower-0", "reclaim", "a pod in a namespace you cannot read")
	contains(t, "stderr", r.Stderr, "note: could not read", "namespaces other than "+nsA,
		// Priority classes are cluster-scoped: the victim's priority (its
		// pod is gone) is unknown, and said why (seen against the real
		// scheduler, docs/why.md).
		"note: could not read priority classes: forbidden", "the priority of a victim whose pod is gone is not known")
	// PRIORITY (FOR's unknown reads "<unknown: see -o wide>").
	contains(t, "stdout", r.Stdout, "<unknown>")
	if strings.Contains(r.Stdout, "owner-0") {
		t.Errorf("named a pod alice cannot read:\n%s", r.Stdout)
	}
	all := env.cli.Run(t, env.cli.Alice, "evictions", "-A")
	if all.Code == 0 || all.Stdout != "" || strings.Count(strings.TrimRight(all.Stderr, "\n"), "\n") != 0 || !strings.Contains(all.Stderr, "forbidden") {
		t.Errorf("-A as alice: want one forbidden line:\n%s", all)
	}
}

// grantRead lets the unprivileged user read pods, events and podgroups
// in ns, and nothing else.
func grantRead(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{schedulingv1beta1.SchemeGroupVersion.Group}, Resources: []string{"podgroups"}, Verbs: []string{"get", "list", "watch"}},
	}}
	if _, err := env.kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: controlplane.UnprivilegedUser}}}
	if _, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// --watch prints an eviction made after the list, with its preemptor.
func TestWatch(t *testing.T) {
	w := newWorld(t)
	ns, q, node := w.ns("a"), w.queue("q"), w.node("n1")
	low, high := w.class("low", 1), w.class("high", 100)
	group(t, ns, "batch", q, low, 1, schedulingv1beta1.PodGroupRunning)
	group(t, ns, "urgent", q, high, 1, schedulingv1beta1.PodGroupInqueue)
	victim := bind(t, pod(t, ns, "batch-0", "batch", low), node)
	preemptor := pod(t, ns, "urgent-0", "urgent", high)
	lines := env.cli.StartWatch(t, "evictions", "-A", "--queue", q, "--watch")
	// The watch has begun once the first list is printed; there is
	// nothing to print, so give the list a moment by listing once too.
	env.cli.MustVC(t, "evictions", "-A", "--queue", q)
	evict(t, victim, infer.Preempt)
	pipelined(t, preemptor, node)
	row := strings.Join(lines.WaitFor(t, ns), " ")
	contains(t, "watched row", row, "preempt", "batch-0", "urgent-0", "[inferred]")
}

func TestBadInput(t *testing.T) {
	admin := env.cli.Admin
	badinput.Run(t, env.cli, env.vc, []badinput.Case{
		{"negative since", admin, []string{"evictions", "--since", "-5m"}, "--since"},
		{"since not a duration", admin, []string{"evictions", "--since", "soon"}, "since"},
		{"output name", admin, []string{"evictions", "-o", "name"}, "name"},
		{"bad queue", admin, []string{"evictions", "--queue", "Not_A_Queue"}, "--queue"},
		{"watch json", admin, []string{"evictions", "-o", "json", "--watch"}, "--watch"},
		{"argument", admin, []string{"evictions", "extra"}, "extra"},
		{"chunk size", admin, []string{"evictions", "--chunk-size", "-1"}, "--chunk-size"},
		{"dead server", env.cli.Dead, []string{"evictions", "-A"}, "cannot reach the Kubernetes API server"},
	})
}
