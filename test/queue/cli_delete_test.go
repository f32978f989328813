package queue

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueDelete(t *testing.T) {
	fresh(t)
	ctx := context.Background()
	mustVC(t, "queue", "create", "e2e-del")
	setStatus(t, "e2e-del", schedulingv1beta1.QueueStateClosed, 0)
	mustVC(t, "queue", "delete", "e2e-del", "--dry-run=server")
	getQueue(t, env.vc, "e2e-del")
	r := mustVC(t, "queue", "delete", "e2e-del", "--wait")
	if strings.TrimSpace(r.Stdout) != "queue.scheduling.volcano.sh/e2e-del deleted" {
		t.Errorf("output: %q", r.Stdout)
	}
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "e2e-del", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("queue still there: %v", err)
	}

	// --close: creates a CloseQueue Command, waits for Closed (played
	// here), then deletes.
	mustVC(t, "queue", "create", "e2e-delc")
	setStatus(t, "e2e-delc", schedulingv1beta1.QueueStateOpen, 0)
	cmd := vcCommand(env.admin, "queue", "delete", "e2e-delc", "--close", "--timeout", "5m")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitUntil(t, "the CloseQueue command", func() bool { return len(commandsFor(t, "e2e-delc")) == 1 })
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "e2e-delc", metav1.GetOptions{}); err != nil {
		t.Fatalf("deleted before Closed: %v", err)
	}
	setStatus(t, "e2e-delc", schedulingv1beta1.QueueStateClosed, 0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("delete --close: %v", err)
	}
	if _, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "e2e-delc", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("queue still there: %v", err)
	}
	if c := commandsFor(t, "e2e-delc")[0]; c.Action != "CloseQueue" {
		t.Errorf("action %s", c.Action)
	}
}
