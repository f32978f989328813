package queue

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueCreateAndRead(t *testing.T) {
	fresh(t)
	r := mustVC(t, "queue", "create", "e2e-read", "--weight", "3", "--capability", "cpu=4,memory=8Gi",
		"--deserved", "cpu=2", "--guarantee", "cpu=1", "--priority", "5", "--reclaimable=false")
	if strings.TrimSpace(r.Stdout) != "queue.scheduling.volcano.sh/e2e-read created" {
		t.Errorf("create output: %q", r.Stdout)
	}
	q := getQueue(t, env.vc, "e2e-read")
	if q.Spec.Weight != 3 || q.Spec.Priority != 5 || q.Spec.Reclaimable == nil || *q.Spec.Reclaimable {
		t.Errorf("spec not as asked: %+v", q.Spec)
	}
	if got := q.Spec.Capability[corev1.ResourceMemory]; got.Cmp(resource.MustParse("8Gi")) != 0 {
		t.Errorf("capability memory = %s", got.String())
	}
	if got := q.Spec.Guarantee.Resource[corev1.ResourceCPU]; got.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("guarantee cpu = %s", got.String())
	}

	// Counts from podgroups when the queue has no status yet: one list.
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pg-read", Namespace: "default"},
		Spec: schedulingv1beta1.PodGroupSpec{Queue: "e2e-read", MinMember: 1}, Status: schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning}}
	if _, err := env.vc.SchedulingV1beta1().PodGroups("default").Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	r = mustVC(t, "queue", "list", "e2e-read")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want header and one row:\n%s", r.Stdout)
	}
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "NAME STATE WEIGHT PARENT INQUEUE PENDING RUNNING UNKNOWN COMPLETED AGE" {
		t.Errorf("header: %q", lines[0])
	}
	if f := strings.Fields(lines[1]); len(f) != 10 || f[0] != "e2e-read" || f[1] != "Open" || f[2] != "3" || f[3] != "root" || f[6] != "1" {
		t.Errorf("row: %q", lines[1])
	}

	// Once the controller maintains status, counts come from it.
	setStatus(t, "e2e-read", schedulingv1beta1.QueueStateOpen, 7)
	r = mustVC(t, "q", "get", "e2e-read", "--no-headers", "-o", "wide")
	if f := strings.Fields(r.Stdout); len(f) != 14 || f[6] != "7" || f[10] != "cpu=4,memory=8Gi" || f[11] != "cpu=2" || f[12] != "cpu=1" || f[13] != "cpu=0/2(0%)" {
		t.Errorf("wide row: %q", r.Stdout)
	}

	r = mustVC(t, "queues", "get", "e2e-read", "-o", "json")
	var list struct {
		Kind  string
		Items []schedulingv1beta1.Queue
	}
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 1 || list.Items[0].Kind != "Queue" || list.Items[0].Spec.Weight != 3 {
		t.Errorf("-o json: %v\n%s", err, r.Stdout)
	}
	r = mustVC(t, "queue", "get", "e2e-read", "-o", "name")
	if strings.TrimSpace(r.Stdout) != "queue.scheduling.volcano.sh/e2e-read" {
		t.Errorf("-o name: %q", r.Stdout)
	}
	r = mustVC(t, "queue", "get", "e2e-read", "-o", "jsonpath={.items[0].spec.weight}")
	if r.Stdout != "3" {
		t.Errorf("-o jsonpath: %q", r.Stdout)
	}
	r = mustVC(t, "queue", "get", "e2e-read", "-o", "custom-columns=N:.metadata.name,W:.spec.weight,S:.status.state")
	if strings.Join(strings.Fields(r.Stdout), " ") != "N W S e2e-read 3 Open" {
		t.Errorf("-o custom-columns: %q", r.Stdout)
	}
	r = mustVC(t, "queue", "get", "e2e-read", "-o", "go-template={{range .items}}{{.metadata.name}}{{end}}")
	if r.Stdout != "e2e-read" {
		t.Errorf("-o go-template: %q", r.Stdout)
	}

	r = mustVC(t, "queue", "describe", "e2e-read")
	for _, want := range []string{"Name:", "e2e-read", "Weight:", "Capability:", "cpu=4,memory=8Gi", "State:", "Running:", "7", "Child Queues:", "Pending Commands:", "Events:"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("describe lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestQueueCommandWireFormat checks the Command on the server is exactly
// what Volcano's vcctl writes, so Volcano's controllers act on it.
func TestQueueCommandWireFormat(t *testing.T) {
	fresh(t)
	mustVC(t, "queue", "create", "e2e-wire")
	uid := getQueue(t, env.vc, "e2e-wire").UID
	mustVC(t, "queue", "close", "e2e-wire")
	mustVC(t, "queue", "open", "e2e-wire", "--command-namespace", "kube-system")

	cmds := commandsFor(t, "e2e-wire")
	if len(cmds) != 2 {
		t.Fatalf("want 2 commands, got %d", len(cmds))
	}
	byAction := map[string]busv1alpha1.Command{}
	for _, c := range cmds {
		byAction[c.Action] = c
	}
	for action, ns := range map[string]string{"CloseQueue": "default", "OpenQueue": "kube-system"} {
		c, ok := byAction[action]
		if !ok {
			t.Fatalf("no %s command", action)
		}
		if c.Namespace != ns {
			t.Errorf("%s namespace = %s, want %s", action, c.Namespace, ns)
		}
		prefix := "e2e-wire-" + strings.ToLower(action) + "-"
		if c.GenerateName != prefix || !strings.HasPrefix(c.Name, prefix) {
			t.Errorf("%s generateName %q name %q, want prefix %q", action, c.GenerateName, c.Name, prefix)
		}
		if len(c.OwnerReferences) != 1 {
			t.Fatalf("%s ownerReferences: %+v", action, c.OwnerReferences)
		}
		ref := c.OwnerReferences[0]
		if ref.APIVersion != "scheduling.volcano.sh/v1beta1" || ref.Kind != "Queue" || ref.Name != "e2e-wire" || ref.UID != uid ||
			ref.Controller == nil || !*ref.Controller || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("%s owner reference: %+v", action, ref)
		}
		if c.TargetObject == nil || *c.TargetObject != ref {
			// Compare the pointed-to booleans, not the pointers.
			tgt := c.TargetObject
			if tgt == nil || tgt.APIVersion != ref.APIVersion || tgt.Kind != ref.Kind || tgt.Name != ref.Name || tgt.UID != ref.UID ||
				tgt.Controller == nil || !*tgt.Controller || tgt.BlockOwnerDeletion == nil || !*tgt.BlockOwnerDeletion {
				t.Errorf("%s target %+v differs from owner reference %+v", action, tgt, ref)
			}
		}
	}
}

func TestQueueDryRun(t *testing.T) {
	fresh(t)
	r := mustVC(t, "queue", "create", "e2e-dry", "--weight", "2", "--dry-run=client", "-o", "yaml")
	if !strings.Contains(r.Stdout, "kind: Queue") || !strings.Contains(r.Stdout, "weight: 2") {
		t.Errorf("client dry run output:\n%s", r.Stdout)
	}
	r = mustVC(t, "queue", "create", "e2e-dry", "--dry-run=server")
	if !strings.Contains(r.Stdout, "(server dry run)") {
		t.Errorf("server dry run output: %q", r.Stdout)
	}
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), "e2e-dry", metav1.GetOptions{}); err == nil {
		t.Fatal("dry run created the queue")
	}
	mustVC(t, "queue", "create", "e2e-dry2")
	r = mustVC(t, "queue", "close", "e2e-dry2", "--dry-run=client", "-o", "yaml")
	for _, want := range []string{"kind: Command", "action: CloseQueue", "generateName: e2e-dry2-closequeue-"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("close dry run lacks %q:\n%s", want, r.Stdout)
		}
	}
	mustVC(t, "queue", "close", "e2e-dry2", "--dry-run=server")
	if n := len(commandsFor(t, "e2e-dry2")); n != 0 {
		t.Errorf("dry runs created %d commands", n)
	}
}

// TestQueueCloseWait proves --wait waits (it can only print Closed after
// the test, playing the controller, wrote it) and reports progress.
func TestQueueCloseWait(t *testing.T) {
	fresh(t)
	mustVC(t, "queue", "create", "e2e-wait")
	setStatus(t, "e2e-wait", schedulingv1beta1.QueueStateOpen, 2)

	cmd := vcCommand(env.admin, "queue", "close", "e2e-wait", "--wait", "--timeout", "5m")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		for l := range lines {
			if strings.Contains(l, want) {
				return
			}
		}
		t.Fatalf("stderr ended before %q", want)
	}
	expect("queue/e2e-wait: Open")
	if n := len(commandsFor(t, "e2e-wait")); n != 1 {
		t.Fatalf("want the CloseQueue command before waiting, got %d", n)
	}
	setStatus(t, "e2e-wait", schedulingv1beta1.QueueStateClosing, 1)
	expect("queue/e2e-wait: Closing, 1 podgroup(s) still in the queue")
	setStatus(t, "e2e-wait", schedulingv1beta1.QueueStateClosed, 0)
	expect("queue/e2e-wait: Closed")
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("close --wait: %v", err)
	}
}

// TestQueueWaitTimeout: with no controller the queue never closes; --wait
// must give up, exit non-zero and say where the queue stands.
func TestQueueWaitTimeout(t *testing.T) {
	fresh(t)
	mustVC(t, "queue", "create", "e2e-timeout")
	setStatus(t, "e2e-timeout", schedulingv1beta1.QueueStateClosing, 3)
	r := runVC(t, "queue", "close", "e2e-timeout", "--wait", "--timeout", timeoutWait)
	if r.Code == 0 {
		t.Fatalf("want failure:\n%s", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "error: timed out after "+timeoutWait+" waiting for queue(s) to be Closed: e2e-timeout is Closing, 3 podgroup(s)") {
		t.Errorf("timeout message: %q", last)
	}
	if !strings.Contains(r.Stderr, "queue/e2e-timeout: Closing") {
		t.Errorf("no progress before the timeout:\n%s", r.Stderr)
	}
}

// waitUntil waits, without a deadline of its own (the test binary's
// -timeout bounds it), for cond, watching queues and commands change.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		w, err := env.vc.BusV1alpha1().Commands(metav1.NamespaceAll).Watch(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if cond() {
			w.Stop()
			return
		}
		<-w.ResultChan()
		w.Stop()
	}
}
