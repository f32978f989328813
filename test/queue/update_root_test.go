package queue

import (
	"os/exec"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUpdateRootResourcesRefused: 'queue update root' refuses a change of
// capability, deserved or guarantee before writing, as Volcano's queue
// webhook (and our vc-queue-root policy) refuse it; its weight may change.
func TestUpdateRootResourcesRefused(t *testing.T) {
	fresh(t)
	vc, _ := clients(t)
	root, err := vc.SchedulingV1beta1().Queues().Get(ctx, "root", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		root = createQueue(t, vc, "root", "")
	} else if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--capability=cpu=1", "--deserved=cpu=1", "--guarantee=cpu=1"} {
		cmd := exec.Command(vcBinary, "--kubeconfig", kubeconfig, "queue", "update", "root", flag)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		const want = "error: the root queue's capability, deserved and guarantee cannot be changed: root stands for the whole cluster; set them on its child queues instead"
		if err == nil || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("queue update root %s: err %v\nstdout %q\nstderr %q", flag, err, stdout.String(), stderr.String())
		}
	}
	got, err := vc.SchedulingV1beta1().Queues().Get(ctx, "root", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Capability)+len(got.Spec.Deserved)+len(got.Spec.Guarantee.Resource) != 0 || got.ResourceVersion != root.ResourceVersion {
		t.Errorf("refused updates changed root: %+v", got.Spec)
	}
	cli(t, "queue", "update", "root", "--weight", "1")
}
