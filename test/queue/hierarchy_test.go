package queue

import (
	"os/exec"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	queuecontroller "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// setParent moves a queue straight through the API, as a user could before
// the admission policies were installed (none are installed here).
func setParent(t *testing.T, vc versioned.Interface, name, parent string) {
	t.Helper()
	patch := []byte(`{"spec":{"parent":"` + parent + `"}}`)
	if _, err := vc.SchedulingV1beta1().Queues().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitProblem waits until the controller reports want (the value of
// rules.HierarchyProblemAnnotation; "" for none) on a queue.
func waitProblem(t *testing.T, vc versioned.Interface, name, want string) *v1beta1.Queue {
	t.Helper()
	var q *v1beta1.Queue
	eventually(t, name+" reported as "+want, func() (bool, error) {
		q = getQueue(t, vc, name)
		return q.Annotations[rules.HierarchyProblemAnnotation] == want, nil
	})
	return q
}

// waitEvent waits for a Warning event with the reason on the queue.
func waitEvent(t *testing.T, kube kubernetes.Interface, q *v1beta1.Queue, reason string) {
	t.Helper()
	sel := fields.Set{"involvedObject.name": q.Name, "involvedObject.uid": string(q.UID), "reason": reason, "type": "Warning"}.String()
	eventually(t, "a "+reason+" event on "+q.Name, func() (bool, error) {
		evs, err := kube.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err == nil && len(evs.Items) > 0, err
	})
}

// waitCommandWaiting waits for the Warning the controller records on a
// Command it cannot apply yet because of the queue's parent: it has taken
// the Command up and decided to keep it.
func waitCommandWaiting(t *testing.T, kube kubernetes.Interface, cmd *busv1alpha1.Command) {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": "Command", "involvedObject.name": cmd.Name, "involvedObject.uid": string(cmd.UID),
		"reason": queuecontroller.WaitingForParent, "type": "Warning"}.String()
	eventually(t, "a "+queuecontroller.WaitingForParent+" event on Command "+cmd.Name, func() (bool, error) {
		evs, err := kube.CoreV1().Events(cmd.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err == nil && len(evs.Items) > 0, err
	})
}

// cli runs the built binary as the admin.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(vcBinary, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl-vc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestQueueHierarchyCycles: a parent cycle made despite admission (before
// it was installed, or two moves racing) is found whatever its length,
// reported on every queue in it with a Warning event and the annotation the
// CLI shows, and never keeps a queue Closed for good: queues the cycle's
// closed members had closed reopen, and an open Command applies although
// the parent is Closed. Breaking the cycle clears the report.
func TestQueueHierarchyCycles(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	startServe(t, "--controllers=queue", "--max-requeue-num=-1")

	createQueue(t, vc, "cy-a", "")
	createQueue(t, vc, "cy-b", "cy-a")
	createQueue(t, vc, "cy-c", "cy-b")
	createQueue(t, vc, "cy-below", "cy-c")
	for _, n := range []string{"cy-a", "cy-b", "cy-c", "cy-below"} {
		waitState(t, vc, n, open)
	}
	commandGone(t, vc, command(t, vc, getQueue(t, vc, "cy-a"), closeQ))
	for _, n := range []string{"cy-a", "cy-b", "cy-c", "cy-below"} {
		waitState(t, vc, n, closed)
	}

	// cy-a -> cy-c -> cy-b -> cy-a: every queue of it is reported.
	setParent(t, vc, "cy-a", "cy-c")
	for n, cycle := range map[string]string{
		"cy-a": "cy-a -> cy-c -> cy-b -> cy-a",
		"cy-b": "cy-b -> cy-a -> cy-c -> cy-b",
		"cy-c": "cy-c -> cy-b -> cy-a -> cy-c",
	} {
		q := waitProblem(t, vc, n, rules.HierarchyProblem(rules.ParentCycle, cycle))
		waitEvent(t, kube, q, rules.ParentCycle)
	}
	// cy-b and cy-c were closed by their parent; in a cycle nothing holds
	// them closed. cy-a was closed by its user and stays so until opened;
	// cy-below follows its parent cy-c, which is not in doubt.
	for _, n := range []string{"cy-b", "cy-c", "cy-below"} {
		q := waitState(t, vc, n, open)
		eventually(t, n+" unmarked", func() (bool, error) {
			q = getQueue(t, vc, n)
			return q.Annotations[keys.ClosedByParent] == "", nil
		})
	}
	if s := getQueue(t, vc, "cy-a").Status.State; s != closed {
		t.Fatalf("cy-a, closed by its user, is %s", s)
	}
	if got := getQueue(t, vc, "cy-below").Annotations[rules.HierarchyProblemAnnotation]; got != "" {
		t.Errorf("cy-below is below the cycle, not in it, yet reported: %q", got)
	}

	// Opening a queue of the cycle is not held up by its (Closed) parent.
	commandGone(t, vc, command(t, vc, getQueue(t, vc, "cy-b"), closeQ))
	waitState(t, vc, "cy-b", closed)
	commandGone(t, vc, command(t, vc, getQueue(t, vc, "cy-a"), openQ))
	waitState(t, vc, "cy-a", open)

	// The CLI shows the report.
	list := cli(t, "queue", "list", "cy-a", "cy-b")
	if !strings.Contains(list, "Open,ParentCycle") || !strings.Contains(list, "Closed,ParentCycle") {
		t.Errorf("queue list does not show the cycle:\n%s", list)
	}
	if d := cli(t, "queue", "describe", "cy-a"); !strings.Contains(d, "Hierarchy:") || !strings.Contains(d, "ParentCycle: cy-a -> cy-c -> cy-b -> cy-a") {
		t.Errorf("queue describe does not show the cycle:\n%s", d)
	}
	if tree := cli(t, "queue", "tree"); !strings.Contains(tree, "cy-a (parent cycle cy-a -> cy-c -> cy-b -> cy-a)") {
		t.Errorf("queue tree does not show the cycle:\n%s", tree)
	}

	// Broken, the cycle is no longer reported, and the hierarchy works
	// again: cy-b, closed by its user, keeps cy-c (its child) closed.
	setParent(t, vc, "cy-a", keys.RootQueue)
	for _, n := range []string{"cy-a", "cy-b", "cy-c"} {
		waitProblem(t, vc, n, "")
	}
	q := waitState(t, vc, "cy-c", closed)
	if q.Annotations[keys.ClosedByParent] != "true" {
		t.Errorf("cy-c closed under cy-b without %s", keys.ClosedByParent)
	}

	// A queue that is its own parent is a cycle of one.
	createQueue(t, vc, "cy-self", "")
	waitState(t, vc, "cy-self", open)
	setParent(t, vc, "cy-self", "cy-self")
	waitEvent(t, kube, waitProblem(t, vc, "cy-self", rules.HierarchyProblem(rules.ParentCycle, "cy-self -> cy-self")), rules.ParentCycle)
	setParent(t, vc, "cy-self", keys.RootQueue)
	waitProblem(t, vc, "cy-self", "")
}

// TestQueueParentMissing: a queue whose parent is gone is not treated as if
// the parent were Open: a child the parent had closed stays Closed and
// marked, an open Command for it waits, the problem is reported (event,
// annotation, CLI) and the sync is retried; once the parent exists again
// (Open), the child follows it and the report is cleared.
func TestQueueParentMissing(t *testing.T) {
	fresh(t)
	vc, kube := clients(t)
	startServe(t, "--controllers=queue", "--max-requeue-num=-1")

	parent := createQueue(t, vc, "mp-parent", "")
	createQueue(t, vc, "mp-child", "mp-parent")
	waitState(t, vc, "mp-child", open)
	commandGone(t, vc, command(t, vc, parent, closeQ))
	waitState(t, vc, "mp-parent", closed)
	waitState(t, vc, "mp-child", closed)

	if err := vc.SchedulingV1beta1().Queues().Delete(ctx, "mp-parent", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	child := waitProblem(t, vc, "mp-child", rules.HierarchyProblem(rules.ParentMissing, "mp-parent"))
	waitEvent(t, kube, child, rules.ParentMissing)
	// The sync that reported it decided the state: still Closed, marked.
	if child.Status.State != closed || child.Annotations[keys.ClosedByParent] != "true" {
		t.Fatalf("mp-child without its parent: state %s, closed-by-parent %q; want Closed and marked",
			child.Status.State, child.Annotations[keys.ClosedByParent])
	}
	// Opening it waits for the parent: the Command stays, and the
	// controller says why (which proves it has taken it up).
	open1 := command(t, vc, child, openQ)
	waitCommandWaiting(t, kube, open1)
	if _, err := vc.BusV1alpha1().Commands(open1.Namespace).Get(ctx, open1.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the open Command of a queue without its parent was consumed: %v", err)
	}
	if s := getQueue(t, vc, "mp-child").Status.State; s != closed {
		t.Fatalf("mp-child opened without its parent: %s", s)
	}
	if list := cli(t, "queue", "list", "mp-child"); !strings.Contains(list, "Closed,ParentMissing") {
		t.Errorf("queue list does not show the missing parent:\n%s", list)
	}

	// The parent is back (Open): the child opens, the Command is applied,
	// the report is gone.
	createQueue(t, vc, "mp-parent", "")
	waitState(t, vc, "mp-child", open)
	commandGone(t, vc, open1)
	waitProblem(t, vc, "mp-child", "")
}
