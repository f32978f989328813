package queue

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueUpdate(t *testing.T) {
	fresh(t)
	ctx := context.Background()
	mustVC(t, "queue", "create", "e2e-upd-parent")
	mustVC(t, "queue", "create", "e2e-upd", "--capability", "cpu=4,memory=8Gi", "--weight", "2")
	// Fields the CLI never sets must survive an update.
	q := getQueue(t, env.vc, "e2e-upd")
	q.Spec.Type = "batch"
	q.Spec.Affinity = &schedulingv1beta1.Affinity{NodeGroupAffinity: &schedulingv1beta1.NodeGroupAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []string{"ng1"}}}
	if _, err := env.vc.SchedulingV1beta1().Queues().Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := mustVC(t, "queue", "update", "e2e-upd", "--weight", "5", "--capability", "cpu=8", "--parent", "e2e-upd-parent", "--priority", "3")
	if strings.TrimSpace(r.Stdout) != "queue.scheduling.volcano.sh/e2e-upd updated" {
		t.Errorf("output: %q", r.Stdout)
	}
	q = getQueue(t, env.vc, "e2e-upd")
	if q.Spec.Weight != 5 || q.Spec.Parent != "e2e-upd-parent" || q.Spec.Priority != 3 {
		t.Errorf("spec: %+v", q.Spec)
	}
	if _, has := q.Spec.Capability[corev1.ResourceMemory]; has || q.Spec.Capability.Cpu().String() != "8" {
		t.Errorf("capability not replaced: %v", q.Spec.Capability)
	}
	if q.Spec.Type != "batch" || q.Spec.Affinity == nil || q.Spec.Affinity.NodeGroupAffinity == nil {
		t.Errorf("update dropped fields it does not model: %+v", q.Spec)
	}
	// Dry runs change nothing.
	rv := q.ResourceVersion
	mustVC(t, "queue", "update", "e2e-upd", "--weight", "9", "--dry-run=server")
	mustVC(t, "queue", "update", "e2e-upd", "--weight", "9", "--dry-run=client")
	if getQueue(t, env.vc, "e2e-upd").ResourceVersion != rv {
		t.Error("dry run changed the queue")
	}
	// An empty list removes it.
	mustVC(t, "queue", "update", "e2e-upd", "--capability", "")
	if c := getQueue(t, env.vc, "e2e-upd").Spec.Capability; len(c) != 0 {
		t.Errorf("capability not removed: %v", c)
	}
}
