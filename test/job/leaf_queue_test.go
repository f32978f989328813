package job

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestJobCreateOnlyInLeafQueue: 'job create' refuses, before writing, a
// queue that has child queues (as Volcano's job admission does) and root,
// naming the children and where to look for a leaf; a leaf is accepted.
func TestJobCreateOnlyInLeafQueue(t *testing.T) {
	ns := namespace(t, "job-leaf")
	queue(t, "leaf-team", schedulingv1beta1.QueueStateOpen)
	queue(t, "leaf-team-dev", schedulingv1beta1.QueueStateOpen)
	ctx := context.Background()
	dev, err := env.vc.SchedulingV1beta1().Queues().Get(ctx, "leaf-team-dev", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dev.Spec.Parent = "leaf-team"
	if _, err := env.vc.SchedulingV1beta1().Queues().Update(ctx, dev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	mustFail(t, `queue "leaf-team" has child queues (leaf-team-dev): a job can only be submitted to a leaf queue (one without child queues): pick one with --queue (see 'kubectl vc queue tree')`,
		"job", "create", "train", "-n", ns, "--image", "busybox", "--queue", "leaf-team")
	mustFail(t, "a job cannot be submitted to the root queue: pick a leaf queue with --queue",
		"job", "create", "train", "-n", ns, "--image", "busybox", "--queue", "root")
	jobs, err := env.vc.BatchV1alpha1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 0 {
		t.Fatalf("refused creates wrote jobs: %v %v", jobs, err)
	}
	mustVC(t, "job", "create", "train", "-n", ns, "--image", "busybox", "--queue", "leaf-team-dev")
}
