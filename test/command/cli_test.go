package command

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCommandList: the CloseQueue Command 'queue close' writes is listed
// across namespaces and by name.
func TestCommandList(t *testing.T) {
	// No controller runs here to consume the Command; both it and the
	// queue would otherwise be left for the next run (go test -count=N),
	// whose 'queue create' would fail and whose '-o name' would list the
	// older Command too.
	t.Cleanup(func() {
		deleteCommands(t, "kube-public", "e2e-cmdlist-closequeue-")
		if err := env.vc.SchedulingV1beta1().Queues().Delete(context.Background(), "e2e-cmdlist", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
	mustVC(t, "queue", "create", "e2e-cmdlist")
	mustVC(t, "queue", "close", "e2e-cmdlist", "--command-namespace", "kube-public")
	r := mustVC(t, "command", "list", "-A")
	found := false
	for _, l := range strings.Split(r.Stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "kube-public" && strings.HasPrefix(f[1], "e2e-cmdlist-closequeue-") && f[2] == "CloseQueue" && f[3] == "Queue/e2e-cmdlist" {
			found = true
		}
	}
	if !found {
		t.Errorf("command list -A:\n%s", r.Stdout)
	}
	r = mustVC(t, "command", "list", "-n", "kube-public", "-o", "name")
	if !strings.HasPrefix(strings.TrimSpace(r.Stdout), "command.bus.volcano.sh/e2e-cmdlist-closequeue-") {
		t.Errorf("-o name: %q", r.Stdout)
	}
}

// TestCommandListWatch: 'command list --watch' prints the Commands there
// are, then a row for a Command created after the list.
func TestCommandListWatch(t *testing.T) {
	const ns = "list-watch-commands"
	ctx := context.Background()
	// Without kube-controller-manager a deleted namespace never goes
	// away, so the namespace is kept across runs of the test and only its
	// Commands are removed (after the watch is stopped: cleanups run last
	// registered first).
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteCommands(t, ns, "") })
	create := func(name string) {
		t.Helper()
		if _, err := env.vc.BusV1alpha1().Commands(ns).Create(ctx, &busv1alpha1.Command{
			ObjectMeta:   metav1.ObjectMeta{Name: name},
			Action:       "OpenQueue",
			TargetObject: &metav1.OwnerReference{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Queue", Name: "q-" + name, UID: "00000000-0000-0000-0000-000000000000"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("before")
	out := startWatch(t, "command", "list", "-n", ns, "--watch", "--no-headers", "--chunk-size", "1")
	if f := out.WaitFor(t, "before"); len(f) < 3 || f[1] != "OpenQueue" || f[2] != "Queue/q-before" {
		t.Fatalf("listed row: %v", f)
	}
	create("after")
	if f := out.WaitFor(t, "after"); len(f) < 3 || f[1] != "OpenQueue" || f[2] != "Queue/q-after" {
		t.Fatalf("watched row: %v", f)
	}
}

// deleteCommands deletes the Commands in ns whose name starts with prefix.
// Commands carry no finalizers, so they are gone when it returns.
func deleteCommands(t *testing.T, ns, prefix string) {
	t.Helper()
	ctx := context.Background()
	cmds, err := env.vc.BusV1alpha1().Commands(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	for _, c := range cmds.Items {
		if !strings.HasPrefix(c.Name, prefix) {
			continue
		}
		if err := env.vc.BusV1alpha1().Commands(ns).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	}
}
