package why

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	whycmd "github.com/kubectl-vc/kubectl-vc/pkg/cli/why"
)

// makeClass creates a priority class, deleted when the test ends.
func makeClass(t *testing.T, name string, value int32) string {
	t.Helper()
	if _, err := env.kube.SchedulingV1().PriorityClasses().Create(context.Background(),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.kube.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func withClass(t *testing.T, pg *schedulingv1beta1.PodGroup, class string) {
	t.Helper()
	updateGroup(t, pg, func(g *schedulingv1beta1.PodGroup) { g.Spec.PriorityClassName = class })
}

// TestQueuePosition: 'why' gives a waiting group's place in its queue's
// line as 'queue pending' orders it (Volcano's default configuration here:
// no ConfigMap; priority.go's jobOrderFn puts the higher priority first,
// then Session.JobOrderFn the older), who is ahead and why; a note, not a
// blocking reason. For an Inqueue group that does not run, what holds it:
// its pods' requests against the queue's deserved share.
func TestQueuePosition(t *testing.T) {
	ns := namespace(t)
	q := "why-line"
	makeQueue(t, q, queueSpec{deserved: "cpu=2"}, open, "cpu=1")
	high := makeClass(t, ns+"-high", 1000)
	makeGroup(t, ns, "oldest", q, 1, "cpu=1", pending)
	time.Sleep(1100 * time.Millisecond)
	train3 := makeGroup(t, ns, "train-3", q, 1, "cpu=1", pending)
	withClass(t, train3, high)
	time.Sleep(1100 * time.Millisecond)
	mine := makeGroup(t, ns, "mine", q, 1, "cpu=1", pending)
	makePod(t, ns, "mine-0", "mine", "volcano", "1", "")
	time.Sleep(1100 * time.Millisecond)
	makeGroup(t, ns, "newest", q, 1, "cpu=1", pending)

	rep := why(t, "podgroup", "mine", "-n", ns)
	r := reason(t, rep, whycmd.QueuePosition, false)
	// Creation times are stored to the second: 'oldest' is 2 or 3 s older.
	want := []string{"position 3 of 4 in queue why-line; ahead: " + ns + "/oldest (created ", "s earlier), " + ns + "/train-3 (priority 1000 > 0)"}
	contains(t, "message", r.Message, want...)
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "order: priority, then gang, then drf, then creation time, then UID (Volcano's default configuration (no ConfigMap volcano-system/volcano-scheduler-configmap))")
	contains(t, "fix", r.Fix, "kubectl vc queue pending why-line")
	// The same from the pod.
	r = reason(t, why(t, "pod", "mine-0", "-n", ns), whycmd.QueuePosition, false)
	contains(t, "pod's message", r.Message, want...)

	// Inqueue but not running: its two pods' 2 CPU on top of the queue's
	// allocated 1 is over the deserved 2.
	updateGroup(t, mine, func(g *schedulingv1beta1.PodGroup) { g.Status.Phase = inqueue })
	makePod(t, ns, "mine-1", "mine", "volcano", "1", "")
	updateGroup(t, mine, func(g *schedulingv1beta1.PodGroup) { g.Spec.MinMember = 2 })
	r = reason(t, why(t, "podgroup", "mine", "-n", ns), whycmd.QueuePosition, false)
	contains(t, "message", r.Message, "position 3 of 4 in queue why-line",
		"Inqueue (admitted) but not running: it waits for cpu: needs 2, queue why-line uses 1 of its deserved 2")

	// A configuration that orders by creation time only (priority's job
	// order disabled): train-3 is ahead for its age, not its priority.
	conf := filepath.Join(t.TempDir(), "volcano-scheduler.conf")
	if err := os.WriteFile(conf, []byte("actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: priority\n    enableJobOrder: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = reason(t, why(t, "podgroup", "mine", "-n", ns, "--scheduler-config-file", conf), whycmd.QueuePosition, false)
	contains(t, "message", r.Message, "position 3 of 4", "ahead: "+ns+"/train-3 (created ", "s earlier), "+ns+"/oldest (created ")

	// A running group has no position.
	updateGroup(t, mine, func(g *schedulingv1beta1.PodGroup) { g.Status.Phase = running })
	for _, x := range why(t, "podgroup", "mine", "-n", ns).Reasons {
		if x.Reason == whycmd.QueuePosition {
			t.Errorf("a Running group has a position: %+v", x)
		}
	}
}

// TestQueuePositionHead: the head of the line, Pending, and what it waits
// for: its minResources against the queue's capability (proportion.go's
// JobEnqueueableFn).
func TestQueuePositionHead(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-head", queueSpec{capability: "cpu=2"}, open, "cpu=1")
	makeGroup(t, ns, "first", "why-head", 1, "cpu=2", pending)
	time.Sleep(1100 * time.Millisecond)
	makeGroup(t, ns, "second", "why-head", 1, "cpu=1", pending)
	r := reason(t, why(t, "podgroup", "first", "-n", ns), whycmd.QueuePosition, false)
	want := "position 1 of 2 in queue why-head; it waits for cpu: needs 2, queue why-head uses 1 of its capability 2"
	if r.Message != want {
		t.Errorf("message %q\nwant %q", r.Message, want)
	}
}

// TestQueuePositionBadConfig: an unreadable configuration file is bad
// input: one line, non-zero exit, nothing on stdout.
func TestQueuePositionBadConfig(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-badconf", queueSpec{}, open, "")
	makeGroup(t, ns, "g", "why-badconf", 1, "", pending)
	missing := filepath.Join(t.TempDir(), "missing.conf")
	r := vc(t, "why", "podgroup", "g", "-n", ns, "--scheduler-config-file", missing)
	if r.Code == 0 || r.Stdout != "" || r.Stderr != "error: cannot read the scheduler configuration file: "+missing+": no such file or directory\n" {
		t.Errorf("unreadable conf file:\n%s", r)
	}
	r = vc(t, "why", "podgroup", "g", "-n", ns, "--scheduler-config", "nope")
	if r.Code == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, `invalid --scheduler-config "nope"`) {
		t.Errorf("bad --scheduler-config:\n%s", r)
	}
}
