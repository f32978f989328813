package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The tests of 'queue pending' put podgroups, their pods, priority classes
// and a node on the real API server in every combination that decides
// Volcano's job order, and compare the command's line with the order the
// scheduler's code gives: Session.JobOrderFn
// (pkg/scheduler/framework/session_plugins.go) asks the job-order function
// of each enabled plugin in tier order, then compares CreationTimestamp,
// then UID. No scheduler runs here: the expected orders are derived from
// that code, named in each case.

// pendingWorld is one test's namespace, queue and objects.
type pendingWorld struct {
	t     *testing.T
	kube  kubernetes.Interface
	ns    string
	queue string
	dir   string
}

func newPendingWorld(t *testing.T, name string, capability corev1.ResourceList) *pendingWorld {
	t.Helper()
	fresh(t)
	vcc, kube := clients(t)
	w := &pendingWorld{t: t, kube: kube, ns: namespaces.PerRun(t, kube, vcc, name), dir: t.TempDir()}
	w.queue = w.ns
	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: w.queue},
		Spec: schedulingv1beta1.QueueSpec{Weight: 1, Capability: capability}}
	if _, err := vcc.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return w
}

type pgOpt func(*schedulingv1beta1.PodGroup)

func withClass(c string) pgOpt {
	return func(pg *schedulingv1beta1.PodGroup) { pg.Spec.PriorityClassName = c }
}
func withMin(n int32) pgOpt { return func(pg *schedulingv1beta1.PodGroup) { pg.Spec.MinMember = n } }
func withMinResources(l string) pgOpt {
	return func(pg *schedulingv1beta1.PodGroup) { r := rlist(l); pg.Spec.MinResources = &r }
}
func withAnnotation(k, v string) pgOpt {
	return func(pg *schedulingv1beta1.PodGroup) { pg.Annotations = map[string]string{k: v} }
}
func withPhase(p schedulingv1beta1.PodGroupPhase) pgOpt {
	return func(pg *schedulingv1beta1.PodGroup) { pg.Status.Phase = p }
}

// podGroup creates a podgroup in the world's queue (PodGroup has no status
// subresource: its phase is written with it, as Volcano's scheduler does).
func (w *pendingWorld) podGroup(name string, opts ...pgOpt) *schedulingv1beta1.PodGroup {
	w.t.Helper()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: schedulingv1beta1.PodGroupSpec{Queue: w.queue, MinMember: 1}}
	for _, o := range opts {
		o(pg)
	}
	if pg.Status.Phase == "" {
		pg.Status.Phase = schedulingv1beta1.PodGroupPending
	}
	out, err := env.vc.SchedulingV1beta1().PodGroups(w.ns).Create(ctx, pg, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// later makes the next podgroup's creation time a later second than the
// last one's (the API server stores creation times to the second).
func later() { time.Sleep(1100 * time.Millisecond) }

// boundPod creates a member pod of group placed on node (a Pending pod
// with a node is bound, for the scheduler a placed task); node "" leaves it
// unplaced, cpu "" makes it request nothing (best effort).
func (w *pendingWorld) boundPod(name, group, node, cpu string) {
	w.t.Helper()
	var req corev1.ResourceList
	if cpu != "" {
		req = rlist("cpu=" + cpu)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Annotations: map[string]string{keys.KubeGroupName: group}},
		Spec: corev1.PodSpec{NodeName: node, SchedulerName: "volcano", Containers: []corev1.Container{{Name: "c", Image: "pause",
			Resources: corev1.ResourceRequirements{Requests: req}}}}}
	if _, err := w.kube.CoreV1().Pods(w.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// priorityClass creates a priority class deleted when the test ends.
func (w *pendingWorld) priorityClass(name string, value int32) string {
	w.t.Helper()
	name = w.ns + "-" + name
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if _, err := w.kube.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() {
		_ = w.kube.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// node registers a Ready node (as a kubelet does), deleted when the test ends.
func (w *pendingWorld) node(allocatable string) string {
	w.t.Helper()
	name := w.ns + "-node"
	n, err := w.kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = w.kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	n.Status.Allocatable = rlist(allocatable)
	n.Status.Capacity = rlist(allocatable)
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := w.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	return name
}

// conf writes a scheduler configuration file and returns its flag.
func (w *pendingWorld) conf(text string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, fmt.Sprintf("conf-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return "--scheduler-config-file=" + p
}

// names runs 'queue pending -o name' and returns the names in line order.
func (w *pendingWorld) names(args ...string) string {
	w.t.Helper()
	r := mustVC(w.t, append([]string{"queue", "pending", w.queue, "-o", "name"}, args...)...)
	return strings.ReplaceAll(strings.TrimSpace(strings.ReplaceAll(r.Stdout, "podgroup.scheduling.volcano.sh/", "")), "\n", ",")
}

func rlist(s string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

const (
	confGangOnly = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n"
	confDRFOnly  = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: drf\n"
	confSLA      = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: sla\n    arguments:\n      sla-waiting-time: 1h\n"
	confNoPrio   = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n    enableJobOrder: false\n  - name: gang\n    enableJobOrder: false\n- plugins:\n  - name: drf\n    enableJobOrder: false\n"
	confTDM      = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n  - name: tdm\n"
)

// TestQueuePendingPriorities: priority.go's jobOrderFn puts the higher
// priority first; the value is the podgroup's class's, and a podgroup with
// no class or a missing one takes 0 when the cluster has no default class
// (SchedulerCache.Snapshot in pkg/scheduler/cache/cache.go). With the
// default configuration (priority, gang, drf) and no ConfigMap, ties fall
// to creation time (Session.JobOrderFn).
func TestQueuePendingPriorities(t *testing.T) {
	w := newPendingWorld(t, "pending-prio", nil)
	high, low := w.priorityClass("high", 1000), w.priorityClass("low", 10)
	w.podGroup("old-low", withClass(low))
	later()
	w.podGroup("none")
	later()
	w.podGroup("new-high", withClass(high))
	later()
	w.podGroup("missing-class", withClass(w.ns+"-nope"))
	later()
	w.podGroup("newest-high", withClass(high))
	w.podGroup("running", withClass(high), withPhase(schedulingv1beta1.PodGroupRunning))

	// No ConfigMap in volcano-system: Volcano's defaults, and the output says so.
	r := mustVC(t, "queue", "pending", w.queue)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "POSITION NAMESPACE NAME PRIORITY MIN RESOURCES PHASE WAITING" {
		t.Errorf("header %q", lines[0])
	}
	var order []string
	for i, l := range lines[1:6] {
		f := strings.Fields(l)
		if f[0] != fmt.Sprint(i+1) || f[1] != w.ns {
			t.Errorf("row %d: %q", i+1, l)
		}
		order = append(order, f[2]+"="+f[3])
	}
	if got, want := strings.Join(order, ","), "new-high=1000,newest-high=1000,old-low=10,none=0,missing-class=0"; got != want {
		t.Errorf("line %s\nwant %s\n%s", got, want, r.Stdout)
	}
	for _, want := range []string{
		"head of " + w.queue + ": " + w.ns + "/new-high lacks nothing",
		"order: priority, then gang, then drf, then creation time, then UID (Volcano's default configuration (no ConfigMap " + keys.VolcanoNamespace + "/volcano-scheduler-configmap))",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "running") {
		t.Errorf("a Running podgroup is in line:\n%s", r.Stdout)
	}

	// A default class gives its value to the podgroups without one (cache.go
	// addPriorityClass: defaultPriority): now 'none' and 'missing-class'
	// (50) come before old-low (10).
	name := w.ns + "-default"
	if _, err := w.kube.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: 50, GlobalDefault: true}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = w.kube.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	}()
	if got, want := w.names(), "new-high,newest-high,none,missing-class,old-low"; got != want {
		t.Errorf("with a default class: %s, want %s", got, want)
	}
	// Priority's job order disabled (enableJobOrder: false) and every other
	// plugin's too: creation time alone.
	if got, want := w.names(w.conf(confNoPrio)), "old-low,none,new-high,missing-class,newest-high"; got != want {
		t.Errorf("plugins disabled: %s, want %s", got, want)
	}
}

// TestQueuePendingSameCreationTime: two podgroups created in the same
// second with the same priority are ordered by UID (Session.JobOrderFn's
// last rule: lv.UID < rv.UID).
func TestQueuePendingSameCreationTime(t *testing.T) {
	w := newPendingWorld(t, "pending-uid", nil)
	var a, b *schedulingv1beta1.PodGroup
	for i := 0; ; i++ {
		a, b = w.podGroup(fmt.Sprintf("twin-a%d", i)), w.podGroup(fmt.Sprintf("twin-b%d", i))
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			break
		}
		for _, pg := range []*schedulingv1beta1.PodGroup{a, b} {
			if err := env.vc.SchedulingV1beta1().PodGroups(w.ns).Delete(ctx, pg.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if i == 20 {
			t.Fatal("could not create two podgroups in the same second")
		}
	}
	want := []string{string(a.UID) + " " + a.Name, string(b.UID) + " " + b.Name}
	sort.Strings(want)
	exp := strings.Fields(want[0])[1] + "," + strings.Fields(want[1])[1]
	if got := w.names(); got != exp {
		t.Errorf("same second: %s, want %s (by UID: %s)", got, exp, strings.Join(want, ", "))
	}
	r := mustVC(t, "queue", "pending", w.queue, "-o", "wide")
	if !strings.Contains(r.Stdout, "same creation time, UID") {
		t.Errorf("-o wide does not say the UID decided:\n%s", r.Stdout)
	}
}

// TestQueuePendingGang: gang.go's jobOrderFn puts a job that is not ready
// (placed pods plus pending pods that request nothing fewer than
// minMember: JobInfo.IsReady) before a ready one, whatever their ages;
// under the default configuration only between equal priorities. A group
// whose gang is placed (bound pods reach minMember) waits no more: its
// phase turns Running in the scheduler's next cycle.
func TestQueuePendingGang(t *testing.T) {
	w := newPendingWorld(t, "pending-gang", nil)
	node := w.node("cpu=100,pods=110")
	w.podGroup("ready-old", withPhase(schedulingv1beta1.PodGroupInqueue), withMin(1))
	w.boundPod("ready-old-0", "ready-old", "", "") // best effort, pending: ready
	w.podGroup("placed", withPhase(schedulingv1beta1.PodGroupInqueue), withMin(1))
	w.boundPod("placed-0", "placed", node, "1")
	later()
	w.podGroup("waiting-new", withMin(2))
	w.boundPod("waiting-new-0", "waiting-new", node, "1")
	if got, want := w.names(w.conf(confGangOnly)), "waiting-new,ready-old"; got != want {
		t.Errorf("gang: %s, want %s", got, want)
	}
	if got, want := w.names(), "waiting-new,ready-old"; got != want {
		t.Errorf("default configuration: %s, want %s", got, want)
	}
	// Without gang (only creation time) the older comes first.
	if got, want := w.names(w.conf(confNoPrio)), "ready-old,waiting-new"; got != want {
		t.Errorf("gang disabled: %s, want %s", got, want)
	}
	r := mustVC(t, "queue", "pending", w.queue, "-o", "wide", w.conf(confGangOnly))
	for _, want := range []string{"not ready 1/2", "ready 1/1", "gang: not ready (1/2 pods) before ready"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("-o wide lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestQueuePendingDRF: drf.go's jobOrderFn puts the smaller dominant share
// first: the largest fraction of any resource the Ready nodes offer that a
// job's placed pods hold (calculateShare).
func TestQueuePendingDRF(t *testing.T) {
	w := newPendingWorld(t, "pending-drf", nil)
	node := w.node("cpu=10,pods=100")
	w.podGroup("big-old", withMin(3))
	w.boundPod("big-old-0", "big-old", node, "4") // 4/10 cpu
	later()
	w.podGroup("small-new", withMin(3))
	w.boundPod("small-new-0", "small-new", node, "1") // 1/10 cpu
	later()
	w.podGroup("none-newest", withMin(3)) // 0
	if got, want := w.names(w.conf(confDRFOnly)), "none-newest,small-new,big-old"; got != want {
		t.Errorf("drf: %s, want %s", got, want)
	}
	// The default configuration asks gang first: all three are not ready,
	// so drf decides.
	if got, want := w.names(), "none-newest,small-new,big-old"; got != want {
		t.Errorf("default configuration: %s, want %s", got, want)
	}
	var doc struct {
		Order  []string `json:"order"`
		Queues []struct {
			Queue     string `json:"queue"`
			PodGroups []struct {
				Name     string  `json:"name"`
				Position int     `json:"position"`
				Share    float64 `json:"share"`
				Behind   string  `json:"behind"`
			} `json:"podgroups"`
		} `json:"queues"`
	}
	r := mustVC(t, "queue", "pending", w.queue, "-o", "json", w.conf(confDRFOnly))
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if strings.Join(doc.Order, ",") != "drf,creation,uid" || len(doc.Queues) != 1 || len(doc.Queues[0].PodGroups) != 3 {
		t.Fatalf("-o json: %+v", doc)
	}
	if g := doc.Queues[0].PodGroups[2]; g.Name != "big-old" || g.Position != 3 || g.Share != 0.4 || !strings.Contains(g.Behind, "drf: dominant share 10% < 40%") {
		t.Errorf("-o json, third: %+v", g)
	}
}

// TestQueuePendingSLA: sla.go's jobOrderFn puts a job with a waiting time
// before one without, and between two the earlier deadline (creation +
// waiting time) first; the plugin's sla-waiting-time argument is the
// waiting time of a job with no annotation of its own
// (JobInfo.SetPodGroup reads volcano.sh/sla-waiting-time).
func TestQueuePendingSLA(t *testing.T) {
	w := newPendingWorld(t, "pending-sla", nil)
	w.podGroup("default-1h")
	later()
	w.podGroup("own-5m", withAnnotation("volcano.sh/sla-waiting-time", "5m"))
	if got, want := w.names(w.conf(confSLA)), "own-5m,default-1h"; got != want {
		t.Errorf("sla: %s, want %s", got, want)
	}
	if got, want := w.names(), "default-1h,own-5m"; got != want {
		t.Errorf("default configuration (no sla): %s, want %s", got, want)
	}
}

// TestQueuePendingHeadWaits: the head of the line, Pending, is admitted
// only while its minResources plus the queue's allocated plus the
// minResources of its Inqueue groups fit the capability (proportion.go's
// JobEnqueueableFn): the command says which resource is short, with
// numbers. Also: a plugin whose order is not modelled (tdm) is named in
// one line, -A shows every queue, a ConfigMap is read.
func TestQueuePendingHeadWaits(t *testing.T) {
	w := newPendingWorld(t, "pending-head", rlist("cpu=2"))
	w.podGroup("admitted", withPhase(schedulingv1beta1.PodGroupInqueue), withMinResources("cpu=1"))
	later()
	w.podGroup("head", withMinResources("cpu=2"))
	r := mustVC(t, "queue", "pending", w.queue)
	want := fmt.Sprintf("head of %s: %s/admitted", w.queue, w.ns)
	if !strings.Contains(r.Stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, r.Stdout)
	}
	// Delete the admitted one: head is now first, and short of CPU against
	// the capability (1 Inqueue elsewhere is gone, so 0 + 2 <= 2 fits);
	// add another Inqueue group holding 1 CPU.
	if err := env.vc.SchedulingV1beta1().PodGroups(w.ns).Delete(ctx, "admitted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.podGroup("holder", withPhase(schedulingv1beta1.PodGroupRunning), withMinResources("cpu=1"))
	w.podGroup("other", withPhase(schedulingv1beta1.PodGroupInqueue), withMinResources("cpu=1"), withClass(w.priorityClass("low", -5)))
	r = mustVC(t, "queue", "pending", w.queue)
	want = fmt.Sprintf("head of %s: %s/head waits for cpu: needs 2, queue %s uses 1 of its capability 2", w.queue, w.ns, w.queue)
	if !strings.Contains(r.Stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, r.Stdout)
	}

	r = mustVC(t, "queue", "pending", w.queue, w.conf(confTDM))
	if !strings.Contains(r.Stdout, "not predicted: plugin(s) tdm order jobs too") {
		t.Errorf("tdm not named:\n%s", r.Stdout)
	}

	// The configuration from a ConfigMap (--scheduler-config): gang only.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sched", Namespace: w.ns}, Data: map[string]string{"volcano-scheduler.conf": confGangOnly}}
	if _, err := w.kube.CoreV1().ConfigMaps(w.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = mustVC(t, "queue", "pending", w.queue, "--scheduler-config", w.ns+"/sched")
	if want := "order: gang, then creation time, then UID (ConfigMap " + w.ns + "/sched key volcano-scheduler.conf)"; !strings.Contains(r.Stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, r.Stdout)
	}

	// -A: every queue with waiting podgroups; a podgroup naming a queue
	// that does not exist is left out, as the scheduler leaves it out
	// (SchedulerCache.Snapshot), and said in a note.
	orphan := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: w.ns},
		Spec: schedulingv1beta1.PodGroupSpec{Queue: w.ns + "-nope", MinMember: 1}}
	if _, err := env.vc.SchedulingV1beta1().PodGroups(w.ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = mustVC(t, "queue", "pending", "-A")
	if !strings.HasPrefix(r.Stdout, "QUEUE") || !strings.Contains(r.Stdout, w.queue+" ") || strings.Contains(r.Stdout, "orphan") ||
		!strings.Contains(r.Stdout, "note: 1 waiting podgroup(s) name a queue that does not exist") {
		t.Errorf("-A:\n%s", r.Stdout)
	}

	// An empty queue: a line on stderr, exit 0.
	createQueue(t, env.vc, w.ns+"-empty", "")
	r = mustVC(t, "queue", "pending", w.ns+"-empty")
	if r.Stderr != "No podgroups wait in queue "+w.ns+"-empty.\n" {
		t.Errorf("empty queue: %s", r)
	}
}

// TestQueuePendingWatch: --watch prints the line again when a podgroup
// joins it.
func TestQueuePendingWatch(t *testing.T) {
	w := newPendingWorld(t, "pending-watch", nil)
	w.podGroup("first")
	lr := env.cli.StartWatch(t, "queue", "pending", w.queue, "--watch")
	lr.WaitFor(t, "1")
	hp := w.priorityClass("hi", 100)
	w.podGroup("second", withClass(hp))
	f := lr.WaitFor(t, "1")
	for f[2] != "second" {
		f = lr.WaitFor(t, "1")
	}
	if f := lr.WaitFor(t, "2"); f[2] != "first" {
		t.Errorf("second row after the change: %v", f)
	}
}

// TestQueuePendingBadInput: one error line, nothing on stdout, non-zero
// exit, nothing written.
func TestQueuePendingBadInput(t *testing.T) {
	fresh(t)
	dir := t.TempDir()
	noActions := filepath.Join(dir, "no-actions.conf")
	if err := os.WriteFile(noActions, []byte("tiers:\n- plugins:\n  - name: gang\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notYAML := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(notYAML, []byte("tiers: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	admin, alice := env.admin, env.alice
	badinput.Run(t, env.cli, env.vc, []badinput.Case{
		{"pending: unknown queue", admin, []string{"queue", "pending", "nope"}, `queue "nope" not found`},
		{"pending: no queue", admin, []string{"queue", "pending"}, "name one queue"},
		{"pending: queue and -A", admin, []string{"queue", "pending", "default", "-A"}, "give a queue or -A, not both"},
		{"pending: bad -o", admin, []string{"queue", "pending", "default", "-o", "table"}, `unknown output format "table"`},
		{"pending: bad name", admin, []string{"queue", "pending", "No/Way"}, "invalid queue name"},
		{"pending: unreadable conf file", admin, []string{"queue", "pending", "default", "--scheduler-config-file", filepath.Join(dir, "missing.conf")}, "cannot read the scheduler configuration file: " + filepath.Join(dir, "missing.conf") + ": no such file or directory"},
		{"pending: conf without actions", admin, []string{"queue", "pending", "default", "--scheduler-config-file", noActions}, "names no actions"},
		{"pending: conf not YAML", admin, []string{"queue", "pending", "default", "--scheduler-config-file", notYAML}, "is not a scheduler configuration"},
		{"pending: bad --scheduler-config", admin, []string{"queue", "pending", "default", "--scheduler-config", "just-a-name"}, "invalid --scheduler-config"},
		{"pending: both configs", admin, []string{"queue", "pending", "default", "--scheduler-config", "a/b", "--scheduler-config-file", noActions}, "not both"},
		{"pending: rbac", alice, []string{"queue", "pending", "default"}, "forbidden"},
	})
}

// TestQueuePendingWithoutRights: a user who may read queues and podgroups
// but not priority classes, nodes, pods or the scheduler's ConfigMap still
// gets the line, with one note per list it could not read saying what was
// assumed, and Volcano's defaults said in the order line.
func TestQueuePendingWithoutRights(t *testing.T) {
	w := newPendingWorld(t, "pending-rbac", nil)
	w.podGroup("only")
	user := w.ns + "-reader"
	if _, err := w.kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{schedulingv1beta1.SchemeGroupVersion.Group},
			Resources: []string{"queues", "podgroups"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.kube.RbacV1().ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{}) })
	if _, err := w.kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	var r result
	eventually(t, "the binding to take effect", func() (bool, error) {
		r = runVC(t, "queue", "pending", w.queue, "--as", user)
		return r.Code == 0, nil
	})
	for _, want := range []string{
		"1          " + w.ns + "   only",
		"(Volcano's default configuration (ConfigMap " + keys.VolcanoNamespace + "/volcano-scheduler-configmap not readable: forbidden",
		"note: could not read priority classes (forbidden",
		"note: could not read nodes (forbidden",
		"note: could not read pods (forbidden",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r)
		}
	}
}
