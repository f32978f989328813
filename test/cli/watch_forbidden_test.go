package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
)

// TestListWatchForbidden: a user who may list podgroups but not watch them
// gets the list, then one line on stderr naming the refusal and a
// non-zero exit; not a log line of client-go's retrying watcher before it.
func TestListWatchForbidden(t *testing.T) {
	ctx := context.Background()
	k := kube(t)
	ns := namespace(t, "watch-forbidden")
	if _, err := k.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "list-only"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"scheduling.volcano.sh"}, Resources: []string{"podgroups"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "list-only"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "list-only"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: controlplane.UnprivilegedUser}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The binding reaches the authorizer through its informer: wait until
	// the list is allowed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := command(env.alice, "podgroup", "list", "-n", ns)
		if cmd.Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list-only Role never took effect")
		}
		time.Sleep(200 * time.Millisecond)
	}

	cmd := command(env.alice, "podgroup", "list", "-n", ns, "--watch")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("exit 0; stdout %q, stderr %q", stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("still running after a refused watch; stderr %q", stderr.String())
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "error: watch ended: forbidden:") || !strings.Contains(msg, "cannot watch") {
		t.Errorf("stderr %q, want one line about the refused watch", msg)
	}
}
