package queue

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	queuecontroller "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// run runs the built binary with a kubeconfig and returns stdout, stderr
// and whether it succeeded.
func run(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, ok bool) {
	t.Helper()
	cmd := exec.Command(vcBinary, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err == nil
}

// failsWith checks a failure as a user sees it: non-zero exit, nothing on
// stdout, one error line on stderr (after a wait's progress lines,
// "queue/NAME: ...") containing every want, and none of avoid.
func failsWith(t *testing.T, stdout, stderr string, ok bool, want []string, avoid ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "queue/") {
			t.Errorf("stderr has more than progress lines and the error: %q", l)
		}
	}
	if ok || stdout != "" || !strings.HasPrefix(last, "error: ") {
		t.Errorf("want a failure with one error line on stderr; ok %v\nstdout %q\nstderr %q", ok, stdout, stderr)
	}
	for _, w := range want {
		if !strings.Contains(last, w) {
			t.Errorf("the error lacks %q:\n%s", w, last)
		}
	}
	for _, a := range avoid {
		if strings.Contains(last, a) {
			t.Errorf("the error says %q:\n%s", a, last)
		}
	}
}

// TestOpenUnderClosedParentNeverSilent is issue 29's first example:
// 'queue close team-a --wait; queue open dev --wait' with dev under team-a.
//
//   - The CLI refuses the open before writing, naming the parent and the
//     command that opens both.
//   - An OpenQueue Command written by another tool (vcctl) is not left
//     waiting in silence: the controller records WaitingForParent on the
//     queue and on the Command, and 'command list -o wide' shows it.
//   - A --wait that times out on such a Command (here a user who may not
//     read the parent, so the CLI cannot refuse up front) says where the
//     queue was left and what the controller reported, and does not ask
//     whether a controller runs.
//   - Opening the parent applies the waiting Command.
func TestOpenUnderClosedParentNeverSilent(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	startServe(t, "--controllers=queue", "--max-requeue-num=-1")
	teamA := createQueue(t, vc, "opc-team-a", "root")
	dev := createQueue(t, vc, "opc-dev", "opc-team-a")
	waitState(t, vc, dev.Name, v1beta1.QueueStateOpen)

	cli(t, "queue", "close", teamA.Name, "--wait", "--timeout", "1m")
	waitState(t, vc, dev.Name, v1beta1.QueueStateClosed)

	stdout, stderr, ok := run(t, kubeconfig, "queue", "open", dev.Name, "--wait", "--timeout", "30s")
	failsWith(t, stdout, stderr, ok, []string{`cannot open queue "opc-dev": its parent "opc-team-a" is Closed`, "kubectl vc queue open opc-team-a opc-dev"})
	if got := queues.CommandsFor(t, vc, dev.Name); len(got) != 0 {
		t.Fatalf("a refused open wrote Commands: %+v", got)
	}

	// As vcctl writes it: the controller says why it waits.
	cmd := command(t, vc, dev, busv1alpha1.OpenQueueAction)
	waitEvent(t, kube, dev, queuecontroller.WaitingForParent)
	eventually(t, "a WaitingForParent event on the Command", func() (bool, error) {
		sel := fields.Set{"involvedObject.kind": "Command", "involvedObject.name": cmd.Name, "reason": queuecontroller.WaitingForParent}.String()
		evs, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err == nil && len(evs.Items) > 0, err
	})
	wide := cli(t, "command", "list", "-n", "default", "-o", "wide")
	var row string
	for _, l := range strings.Split(wide, "\n") {
		if strings.HasPrefix(l, cmd.Name+" ") {
			row = l
		}
	}
	if !strings.Contains(row, queuecontroller.WaitingForParent) || !strings.Contains(row, "its parent queue opc-team-a is Closed") {
		t.Errorf("command list -o wide does not say why %s waits:\n%s", cmd.Name, wide)
	}

	// A user who may open queues but not read opc-team-a: the CLI cannot
	// refuse up front, so the wait times out, and says why.
	alice := filepath.Join(t.TempDir(), "alice.kubeconfig")
	if err := cp.WriteKubeconfig(alice, controlplane.UnprivilegedUser); err != nil {
		t.Fatal(err)
	}
	grant(t, kube, "opc-alice", []rbacv1.PolicyRule{
		{APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"queues"}, Verbs: []string{"get"}, ResourceNames: []string{dev.Name}},
		{APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"queues"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"bus.volcano.sh"}, Resources: []string{"commands"}, Verbs: []string{"create", "list"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list"}},
	})
	stdout, stderr, ok = run(t, alice, "queue", "open", dev.Name, "--wait", "--timeout", timeoutWait)
	if i := strings.Index(stdout, "\n"); i >= 0 {
		stdout = stdout[i+1:] // the "created" line of the Command
	}
	failsWith(t, stdout, stderr, ok, []string{
		"timed out after " + timeoutWait + " waiting for queue(s) to be Open: opc-dev is Closed (",
		"still pending; the controller reported WaitingForParent: ",
		"its parent queue opc-team-a is Closed",
	}, "is the queue controller running")

	cli(t, "queue", "open", teamA.Name, "--wait", "--timeout", "1m")
	commandGone(t, vc, cmd)
	waitState(t, vc, dev.Name, v1beta1.QueueStateOpen)
}

// TestWaitTimeoutsSayWhereObjectsWereLeft: a --wait that times out says
// where each object was left and why, and asks whether a controller runs
// only when none took the Command. 'queue delete --close --wait' that times
// out says that nothing was deleted.
func TestWaitTimeoutsSayWhereObjectsWereLeft(t *testing.T) {
	fresh(t)
	vc, _ := clients(t)

	// No controller: the Command is never taken.
	lonely := createQueue(t, vc, "wto-lonely", "root")
	stdout, stderr, ok := run(t, kubeconfig, "queue", "close", lonely.Name, "--wait", "--timeout", timeoutWait, "-o", "name")
	if i := strings.Index(stdout, "\n"); i >= 0 {
		stdout = stdout[i+1:]
	}
	failsWith(t, stdout, stderr, ok, []string{
		"timed out after " + timeoutWait + " waiting for queue(s) to be Closed: wto-lonely is Open (Command CloseQueue default/wto-lonely-closequeue-",
		"still pending; no controller has taken it or reported why: is a queue controller running? see 'kubectl vc doctor'",
	})

	// A controller that took the Command: the queue is Closing, held by a
	// running podgroup; nothing suggests the controller is not running.
	startServe(t, "--controllers=queue")
	busy := createQueue(t, vc, "wto-busy", "root")
	waitState(t, vc, busy.Name, v1beta1.QueueStateOpen)
	podGroup(t, vc, "wto-pg", busy.Name, v1beta1.PodGroupRunning)
	// The close must find the podgroup counted, or the queue ends Closed
	// and is deleted.
	waitCounts(t, vc, busy.Name, v1beta1.QueueStatus{State: v1beta1.QueueStateOpen, Running: 1})
	stdout, stderr, ok = run(t, kubeconfig, "queue", "delete", busy.Name, "--close", "--wait", "--timeout", timeoutWait)
	failsWith(t, stdout, stderr, ok, []string{
		"timed out after " + timeoutWait + " waiting for queue(s) to be Closed: wto-busy is Closing, 1 podgroup(s) still in the queue",
		"nothing was deleted: wto-busy left so, undeleted (delete once Closed: kubectl vc queue delete wto-busy)",
		"kubectl vc queue delete wto-busy",
	}, "is the queue controller running", "no controller has taken")
	if q := getQueue(t, vc, busy.Name); q.Status.State != v1beta1.QueueStateClosing || q.DeletionTimestamp != nil {
		t.Errorf("queue %s: state %s, deletion %v", q.Name, q.Status.State, q.DeletionTimestamp)
	}
	// Left Closing, the lonely queue's Command is applied now that a
	// controller runs.
	waitState(t, vc, lonely.Name, v1beta1.QueueStateClosed)
}

// grant binds a ClusterRole of rules to alice for the test.
func grant(t *testing.T, kube kubernetes.Interface, name string, rules []rbacv1.PolicyRule) {
	t.Helper()
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: controlplane.UnprivilegedUser}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
}
