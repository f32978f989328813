package queue

import (
	"bufio"
	"strings"
	"testing"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestQueueListWatch: --watch prints the list, then a row per change.
func TestQueueListWatch(t *testing.T) {
	fresh(t)
	mustVC(t, "queue", "create", "e2e-watch")
	cmd := vcCommand(env.admin, "queue", "list", "e2e-watch", "--watch", "--no-headers")
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
