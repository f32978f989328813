package job

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestPodListWatch: 'pod list --watch' prints the list, then a row per
// change of a Volcano pod, found by its queue annotation or by a PodGroup
// made after the list; other pods are not printed.
func TestPodListWatch(t *testing.T) {
	ns := namespace(t, "job-pods-watch")
	plainPod(t, ns, "first", map[string]string{"volcano.sh/queue-name": "research"})
	cmd := command(env.admin, "pod", "list", "-n", ns, "--watch", "--no-headers")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	rows := binary.ReadLines(stdout)
	if f := rows.WaitFor(t, "first"); len(f) < 4 || f[3] != "research" {
		t.Fatalf("first row: %v", f)
	}
	plainPod(t, ns, "unrelated", nil)
	if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-late", Namespace: ns},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "prod"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plainPod(t, ns, "grouped", map[string]string{"scheduling.k8s.io/group-name": "pg-late"})
	if f := rows.WaitFor(t, "grouped"); len(f) < 4 || f[3] != "prod" {
		t.Fatalf("row of the grouped pod: %v", f)
	}
	for _, l := range rows.Seen {
		if strings.HasPrefix(l, "unrelated") {
			t.Errorf("a pod Volcano does not schedule was printed: %q", l)
		}
	}
}
