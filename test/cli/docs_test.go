package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCaptureDocs records real output for docs/*.md. It runs only when
// KUBECTL_VC_DOCS_OUT names a directory:
//
//	KUBECTL_VC_DOCS_OUT=/tmp/docs go test ./test/cli -run TestCaptureDocs
func TestCaptureDocs(t *testing.T) {
	out := os.Getenv("KUBECTL_VC_DOCS_OUT")
	if out == "" {
		t.Skip("set KUBECTL_VC_DOCS_OUT to capture documentation output")
	}
	var b strings.Builder
	show := func(kubeconfig string, args ...string) {
		r := runCmd(t, command(kubeconfig, args...))
		fmt.Fprintf(&b, "$ kubectl vc %s\n%s%s", strings.Join(args, " "), r.Stdout, r.Stderr)
		if r.Code != 0 {
			fmt.Fprintf(&b, "(exit %d)\n", r.Code)
		}
		b.WriteString("\n")
	}
	for _, q := range []string{"root", "default"} {
		_ = runCmd(t, command(env.admin, "queue", "create", q))
	}
	show(env.admin, "queue", "create", "team-a", "--weight", "2", "--capability", "cpu=8,memory=16Gi")
	show(env.admin, "queue", "create", "team-a-batch", "--parent", "team-a", "--deserved", "cpu=4", "--guarantee", "cpu=2")
	show(env.admin, "queue", "create", "team-b", "--dry-run=client", "-o", "yaml")
	setStatus(t, "root", schedulingv1beta1.QueueStateOpen, 0)
	setStatus(t, "default", schedulingv1beta1.QueueStateOpen, 0)
	setStatus(t, "team-a", schedulingv1beta1.QueueStateOpen, 3)
	show(env.admin, "queue", "list")
	show(env.admin, "queue", "list", "-o", "wide")
	show(env.admin, "queue", "list", "-o", "custom-columns=NAME:.metadata.name,STATE:.status.state,PARENT:.spec.parent")
	show(env.admin, "queue", "tree")
	show(env.admin, "queue", "close", "team-a-batch")
	show(env.admin, "queue", "close", "team-a", "--dry-run=client", "-o", "yaml")
	show(env.admin, "command", "list", "-A")
	show(env.admin, "queue", "describe", "team-a-batch")
	show(env.admin, "queue", "update", "team-a", "--weight", "4", "--capability", "cpu=16")
	show(env.admin, "queue", "close", "team-a", "--wait", "--timeout", "3s")
	show(env.admin, "queue", "close", "root")
	show(env.admin, "queue", "delete", "default")
	show(env.admin, "queue", "create", "team-c", "--capability", "cpu=lots")
	show(env.admin, "queue", "create", "team-c", "--capability", "cpu=1000E")
	makePodGroups(t)
	show(env.admin, "podgroup", "list", "-A")
	show(env.admin, "pg", "list", "-n", "e2e-pg", "--queue", "q-pg", "-o", "wide")
	show(env.admin, "pg", "describe", "train", "-n", "e2e-pg")
	show(env.admin, "pg", "list", "-n", "e2e-pg", "--phase", "Done")
	show(env.alice, "queue", "list")
	show(env.dead, "queue", "list")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "session.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
