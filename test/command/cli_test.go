package command

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCommandList: the CloseQueue Command 'queue close' writes is listed
// across namespaces and by name.
func TestCommandList(t *testing.T) {
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
	if _, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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
