package admission

import (
	"bytes"
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

// runCLI runs one kubectl-vc command in-process against the test's API
// server, as admin.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	args = append([]string{"--kubeconfig", kubeconfig, "--context", "admin"}, args...)
	code = cli.Execute(streams, args, cli.Commands()...)
	return code, out.String(), errOut.String()
}

// mustFailWith checks that a command failed with one error line containing
// want.
func mustFailWith(t *testing.T, code int, stdout, stderr, want string) {
	t.Helper()
	if code == 0 {
		t.Fatalf("exit code 0; stdout %q", stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: ") {
		t.Fatalf("stderr is not one error line: %q", stderr)
	}
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q lacks %q", stderr, want)
	}
}

// Deleting an Open queue from the command line prints the policy's message,
// on one line, and fails.
func TestCLIQueueDeleteOfOpenQueue(t *testing.T) {
	setup(t)
	ctx := context.Background()
	if err := createQueueWithState(ctx, vc(t), &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "cli-open"}}, schedulingv1beta1.QueueStateOpen); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("queue", "delete", "cli-open")
	mustFailWith(t, code, stdout, stderr, "queue cli-open is Open: close it first: kubectl vc queue close cli-open --wait")
}

// A queue with a child is refused before anything is written (with --close
// it would otherwise be closed and then not deleted); naming the whole
// subtree deletes it, children first, which the policies accept.
func TestCLIQueueDeleteSubtree(t *testing.T) {
	setup(t)
	ctx := context.Background()
	c := vc(t)
	for _, q := range []*schedulingv1beta1.Queue{
		{ObjectMeta: metav1.ObjectMeta{Name: "cli-tree"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cli-tree-a"}, Spec: schedulingv1beta1.QueueSpec{Parent: "cli-tree"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cli-tree-a1"}, Spec: schedulingv1beta1.QueueSpec{Parent: "cli-tree-a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cli-tree-b"}, Spec: schedulingv1beta1.QueueSpec{Parent: "cli-tree"}},
	} {
		state := schedulingv1beta1.QueueStateClosed
		if q.Name == "cli-tree" {
			state = schedulingv1beta1.QueueStateOpen
		}
		if err := createQueueWithState(ctx, c, q, state); err != nil {
			t.Fatal(err)
		}
	}
	commands := func() int {
		l, err := c.BusV1alpha1().Commands("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	before := commands()

	code, stdout, stderr := runCLI("queue", "delete", "cli-tree", "--close")
	mustFailWith(t, code, stdout, stderr, `cannot delete queue "cli-tree": it has child queue "cli-tree-a" (and 1 more): delete it too or move it to another parent first`)
	code, stdout, stderr = runCLI("queue", "delete", "cli-tree-b", "cli-tree", "cli-tree-a", "--close")
	mustFailWith(t, code, stdout, stderr, `cannot delete queue "cli-tree-a": it has child queue "cli-tree-a1": delete it too`)
	if n := commands(); n != before {
		t.Fatalf("refused deletes created %d CloseQueue Command(s)", n-before)
	}
	if q := mustGetQueue(t, "cli-tree"); q.Status.State != schedulingv1beta1.QueueStateOpen {
		t.Fatalf("refused delete changed cli-tree to %q", q.Status.State)
	}

	// Given parent first; deleted leaves first. No controller runs here, so
	// the parent is Closed by hand (delete --close would wait for one).
	if err := setState(ctx, c, "cli-tree", schedulingv1beta1.QueueStateClosed); err != nil {
		t.Fatal(err)
	}
	// A server dry run deletes nothing, so the parents' children are still
	// there when the server checks the parents: the refusal that names only
	// a child being deleted too does not fail the dry run.
	code, stdout, stderr = runCLI("queue", "delete", "cli-tree", "cli-tree-b", "cli-tree-a", "cli-tree-a1", "--dry-run=server")
	if code != 0 {
		t.Fatalf("server dry run of the subtree: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, "deleted (server dry run)\n"); n != 4 {
		t.Fatalf("server dry run printed %d deletions: %q", n, stdout)
	}
	for _, n := range []string{"cli-tree", "cli-tree-a", "cli-tree-a1", "cli-tree-b"} {
		mustGetQueue(t, n)
	}

	code, stdout, stderr = runCLI("queue", "delete", "cli-tree", "cli-tree-b", "cli-tree-a", "cli-tree-a1", "--wait")
	if code != 0 {
		t.Fatalf("delete of the subtree: exit %d: %s", code, stderr)
	}
	want := "queue.scheduling.volcano.sh/cli-tree-b deleted\n" +
		"queue.scheduling.volcano.sh/cli-tree-a1 deleted\n" +
		"queue.scheduling.volcano.sh/cli-tree-a deleted\n" +
		"queue.scheduling.volcano.sh/cli-tree deleted\n"
	if stdout != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	for _, n := range []string{"cli-tree", "cli-tree-a", "cli-tree-a1", "cli-tree-b"} {
		if _, err := c.SchedulingV1beta1().Queues().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("queue %s: %v", n, err)
		}
	}
}
