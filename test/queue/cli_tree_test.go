package queue

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestQueueTree(t *testing.T) {
	fresh(t)
	for _, name := range []string{"root", "default"} {
		if _, err := env.vc.SchedulingV1beta1().Queues().Create(context.Background(),
			&schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	mustVC(t, "queue", "create", "e2e-tree-a")
	mustVC(t, "queue", "create", "e2e-tree-b", "--parent", "e2e-tree-a")
	r := mustVC(t, "queue", "tree")
	lines := strings.Split(r.Stdout, "\n")
	idx := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, "│├└─ "), prefix+" ") {
				return i
			}
		}
		t.Fatalf("%s not in tree:\n%s", prefix, r.Stdout)
		return -1
	}
	root, a, b := idx("root"), idx("e2e-tree-a"), idx("e2e-tree-b")
	if !(root < a && a < b) || !strings.HasPrefix(lines[root], "root") {
		t.Errorf("order wrong:\n%s", r.Stdout)
	}
	if !strings.Contains(lines[b], "└── e2e-tree-b") || len(lines[b])-len(strings.TrimLeft(lines[b], " │")) <= len(lines[a])-len(strings.TrimLeft(lines[a], " │")) {
		t.Errorf("child not indented under its parent:\n%s", r.Stdout)
	}
}
