package e2e

import (
	"bufio"
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(env.cp.AdminConfig())
}

func TestQueueUpdate(t *testing.T) {
	ctx := context.Background()
	mustVC(t, "queue", "create", "e2e-upd-parent")
	mustVC(t, "queue", "create", "e2e-upd", "--capability", "cpu=4,memory=8Gi", "--weight", "2")
	// Fields the CLI never sets must survive an update.
	q := getQueue(t, "e2e-upd")
	q.Spec.Type = "batch"
	q.Spec.Affinity = &schedulingv1beta1.Affinity{NodeGroupAffinity: &schedulingv1beta1.NodeGroupAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []string{"ng1"}}}
	if _, err := env.vc.SchedulingV1beta1().Queues().Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := mustVC(t, "queue", "update", "e2e-upd", "--weight", "5", "--capability", "cpu=8", "--parent", "e2e-upd-parent", "--priority", "3")
	if strings.TrimSpace(r.stdout) != "queue.scheduling.volcano.sh/e2e-upd updated" {
		t.Errorf("output: %q", r.stdout)
	}
	q = getQueue(t, "e2e-upd")
	if q.Spec.Weight != 5 || q.Spec.Parent != "e2e-upd-parent" || q.Spec.Priority != 3 {
		t.Errorf("spec: %+v", q.Spec)
	}
	if _, has := q.Spec.Capability[corev1.ResourceMemory]; has || q.Spec.Capability.Cpu().String() != "8" {
		t.Errorf("capability not replaced: %v", q.Spec.Capability)
	}
	if q.Spec.Type != "batch" || q.Spec.Affinity == nil || q.Spec.Affinity.NodeGroupAffinity == nil {
		t.Errorf("update dropped fields it does not model: %+v", q.Spec)
	}
	// Dry runs change nothing.
	rv := q.ResourceVersion
	mustVC(t, "queue", "update", "e2e-upd", "--weight", "9", "--dry-run=server")
	mustVC(t, "queue", "update", "e2e-upd", "--weight", "9", "--dry-run=client")
	if getQueue(t, "e2e-upd").ResourceVersion != rv {
		t.Error("dry run changed the queue")
	}
	// An empty list removes it.
	mustVC(t, "queue", "update", "e2e-upd", "--capability", "")
	if c := getQueue(t, "e2e-upd").Spec.Capability; len(c) != 0 {
		t.Errorf("capability not removed: %v", c)
	}
}

func TestQueueDelete(t *testing.T) {
	ctx := context.Background()
	mustVC(t, "queue", "create", "e2e-del")
	setStatus(t, "e2e-del", schedulingv1beta1.QueueStateClosed, 0)
	mustVC(t, "queue", "delete", "e2e-del", "--dry-run=server")
	getQueue(t, "e2e-del")
	r := mustVC(t, "queue", "delete", "e2e-del", "--wait")
	if strings.TrimSpace(r.stdout) != "queue.scheduling.volcano.sh/e2e-del deleted" {
		t.Errorf("output: %q", r.stdout)
	}
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "e2e-del", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("queue still there: %v", err)
	}

	// --close: creates a CloseQueue Command, waits for Closed (played
	// here), then deletes.
	mustVC(t, "queue", "create", "e2e-delc")
	setStatus(t, "e2e-delc", schedulingv1beta1.QueueStateOpen, 0)
	cmd := command(env.admin, "queue", "delete", "e2e-delc", "--close", "--timeout", "5m")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitUntil(t, "the CloseQueue command", func() bool { return len(commandsFor(t, "e2e-delc")) == 1 })
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "e2e-delc", metav1.GetOptions{}); err != nil {
		t.Fatalf("deleted before Closed: %v", err)
	}
	setStatus(t, "e2e-delc", schedulingv1beta1.QueueStateClosed, 0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("delete --close: %v", err)
	}
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "e2e-delc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("queue still there: %v", err)
	}
	if c := commandsFor(t, "e2e-delc")[0]; c.Action != "CloseQueue" {
		t.Errorf("action %s", c.Action)
	}
}

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
	lines := strings.Split(r.stdout, "\n")
	idx := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, "│├└─ "), prefix+" ") {
				return i
			}
		}
		t.Fatalf("%s not in tree:\n%s", prefix, r.stdout)
		return -1
	}
	root, a, b := idx("root"), idx("e2e-tree-a"), idx("e2e-tree-b")
	if !(root < a && a < b) || !strings.HasPrefix(lines[root], "root") {
		t.Errorf("order wrong:\n%s", r.stdout)
	}
	if !strings.Contains(lines[b], "└── e2e-tree-b") || len(lines[b])-len(strings.TrimLeft(lines[b], " │")) <= len(lines[a])-len(strings.TrimLeft(lines[a], " │")) {
		t.Errorf("child not indented under its parent:\n%s", r.stdout)
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

func TestPodGroupListDescribe(t *testing.T) {
	makePodGroups(t)
	r := mustVC(t, "pg", "list", "-n", "e2e-pg")
	if got := strings.Fields(strings.Split(r.stdout, "\n")[0]); strings.Join(got, " ") != "NAME PHASE MINMEMBER RUNNING QUEUE AGE" {
		t.Errorf("header: %q", got)
	}
	if !strings.Contains(r.stdout, "eval") || !strings.Contains(r.stdout, "train") {
		t.Errorf("list:\n%s", r.stdout)
	}
	r = mustVC(t, "podgroups", "get", "-A", "--queue", "q-pg", "--no-headers")
	if f := strings.Fields(r.stdout); len(f) != 7 || f[0] != "e2e-pg" || f[1] != "train" || f[2] != "Running" || f[3] != "2" || f[5] != "q-pg" {
		t.Errorf("-A --queue: %q", r.stdout)
	}
	r = mustVC(t, "podgroup", "list", "-n", "e2e-pg", "--phase", "Pending", "-o", "name")
	if strings.TrimSpace(r.stdout) != "podgroup.scheduling.volcano.sh/eval" {
		t.Errorf("--phase Pending -o name: %q", r.stdout)
	}
	r = mustVC(t, "podgroup", "describe", "train", "-n", "e2e-pg")
	for _, want := range []string{"Queue:", "q-pg", "Min Member:", "Priority Class:", "high", "Phase:", "Running",
		"Pods:", "train-0", "node-7", "Events:", "Scheduled", "all 2 members bound"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "train-0  Running  node-7") {
		t.Errorf("member pod line lacks phase and node:\n%s", r.stdout)
	}
}

func TestCommandList(t *testing.T) {
	mustVC(t, "queue", "create", "e2e-cmdlist")
	mustVC(t, "queue", "close", "e2e-cmdlist", "--command-namespace", "kube-public")
	r := mustVC(t, "command", "list", "-A")
	found := false
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "kube-public" && strings.HasPrefix(f[1], "e2e-cmdlist-closequeue-") && f[2] == "CloseQueue" && f[3] == "Queue/e2e-cmdlist" {
			found = true
		}
	}
	if !found {
		t.Errorf("command list -A:\n%s", r.stdout)
	}
	r = mustVC(t, "command", "list", "-n", "kube-public", "-o", "name")
	if !strings.HasPrefix(strings.TrimSpace(r.stdout), "command.bus.volcano.sh/e2e-cmdlist-closequeue-") {
		t.Errorf("-o name: %q", r.stdout)
	}
}

// TestCompletion asks the binary for completions as the shell scripts do.
func TestCompletion(t *testing.T) {
	mustVC(t, "queue", "create", "e2e-comp-one")
	mustVC(t, "queue", "create", "e2e-comp-two")
	r := mustVC(t, "__complete", "queue", "close", "e2e-comp-one", "e2e-comp")
	if !strings.Contains(r.stdout, "e2e-comp-two") || strings.Contains(r.stdout, "e2e-comp-one\n") {
		t.Errorf("positional completion:\n%s", r.stdout)
	}
	r = mustVC(t, "__complete", "queue", "create", "x", "--parent", "e2e-comp-")
	if !strings.Contains(r.stdout, "e2e-comp-one") || !strings.Contains(r.stdout, "e2e-comp-two") {
		t.Errorf("--parent completion:\n%s", r.stdout)
	}
	makePodGroups(t)
	r = mustVC(t, "__complete", "pg", "describe", "-n", "e2e-pg", "tr")
	if !strings.HasPrefix(r.stdout, "train\n") || strings.Contains(r.stdout, "eval") {
		t.Errorf("podgroup completion:\n%s", r.stdout)
	}
	r = mustVC(t, "__complete", "pg", "list", "--queue", "e2e-comp-t")
	if !strings.HasPrefix(r.stdout, "e2e-comp-two\n") {
		t.Errorf("--queue completion:\n%s", r.stdout)
	}
}

// TestQueueListWatch: --watch prints the list, then a row per change.
func TestQueueListWatch(t *testing.T) {
	mustVC(t, "queue", "create", "e2e-watch")
	cmd := command(env.admin, "queue", "list", "e2e-watch", "--watch", "--no-headers")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	next := func() []string {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("watch output ended: %v", sc.Err())
		}
		return strings.Fields(sc.Text())
	}
	if f := next(); len(f) < 2 || f[0] != "e2e-watch" || f[1] != "Open" {
		t.Fatalf("first row: %v", f)
	}
	setStatus(t, "e2e-watch", schedulingv1beta1.QueueStateClosing, 4)
	if f := next(); len(f) < 7 || f[1] != "Closing" || f[6] != "4" {
		t.Fatalf("row after the change: %v", f)
	}
}
