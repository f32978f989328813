package job

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// TestCaptureDocs records the real output shown in docs/job.md. It runs
// only when KUBECTL_VC_DOCS_OUT names a directory:
//
//	KUBECTL_VC_DOCS_OUT=/tmp/docs go test ./test/job -run TestCaptureDocs
func TestCaptureDocs(t *testing.T) {
	out := os.Getenv("KUBECTL_VC_DOCS_OUT")
	if out == "" {
		t.Skip("set KUBECTL_VC_DOCS_OUT to capture documentation output")
	}
	var b strings.Builder
	show := func(r result, args ...string) {
		fmt.Fprintf(&b, "$ kubectl vc %s\n%s%s", strings.Join(args, " "), r.Stdout, r.Stderr)
		if r.Code != 0 {
			fmt.Fprintf(&b, "(exit %d)\n", r.Code)
		}
		b.WriteString("\n")
	}
	do := func(args ...string) { show(vc(t, args...), args...) }
	ns := namespace(t, "research")
	queue(t, "default", schedulingv1beta1.QueueStateOpen)
	queue(t, "team-a", schedulingv1beta1.QueueStateOpen)
	queue(t, "team-b", schedulingv1beta1.QueueStateClosed)

	do("job", "create", "train", "-n", ns, "--image", "busybox:1.36", "--replicas", "4", "--min", "2", "--queue", "team-a",
		"--requests", "cpu=1,memory=1Gi", "--limits", "cpu=2,memory=1Gi", "--command", "--", "sleep", "3600")
	do("job", "create", "eval", "-n", ns, "--image", "busybox:1.36", "--queue", "team-a", "--dry-run=client", "-o", "yaml")
	do("job", "create", "eval", "-n", ns, "--image", "busybox:1.36", "--queue", "team-b")
	do("job", "create", "eval", "-n", ns, "--image", "busybox:1.36", "--requests", "cpu=2", "--limits", "cpu=1")
	do("job", "create", "eval", "-n", ns, "--image", "busybox:1.36", "--replicas", "2")
	// Play the job controller: train runs, eval is pending.
	since := metav1.NewTime(time.Now().Add(-30 * time.Second))
	train := setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.MinAvailable, s.Running, s.Pending = batchv1alpha1.JobRunning, 2, 3, 1
		s.Conditions = []batchv1alpha1.JobCondition{{Status: batchv1alpha1.JobPending, LastTransitionTime: &since}, {Status: batchv1alpha1.JobRunning, LastTransitionTime: &since}}
	})
	if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "train-" + string(train.UID), Namespace: ns, OwnerReferences: []metav1.OwnerReference{expectedRef(train)}},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 2, Queue: "team-a"},
		Status:     schedulingv1beta1.PodGroupStatus{Phase: schedulingv1beta1.PodGroupRunning, Running: 3},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := []*corev1.Pod{
		pod(t, train, "default0", 0, "node-1", corev1.PodRunning),
		pod(t, train, "default0", 1, "node-1", corev1.PodRunning),
		pod(t, train, "default0", 2, "node-2", corev1.PodRunning),
		pod(t, train, "default0", 3, "", corev1.PodPending),
	}

	do("job", "list", "-n", ns)
	do("job", "list", "-A", "--queue", "team-a", "-o", "wide")
	do("pod", "list", "-n", ns, "--job", "train")
	do("job", "describe", "train", "-n", ns)
	do("job", "resume", "train", "-n", ns)
	do("job", "suspend", "train", "-n", ns, "--dry-run=client", "-o", "yaml")

	// suspend --wait, the test answering as Volcano's job controller.
	args := []string{"job", "suspend", "train", "-n", ns, "--wait"}
	bg := start(t, args...)
	bg.waitStderr(t, "waiting for a job controller")
	take(t, ns, "train", "AbortJob")
	bg.waitStderr(t, "Command taken")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Running, s.Pending, s.Terminating = batchv1alpha1.JobAborting, 0, 0, 4
	})
	bg.waitStderr(t, "Aborting")
	for _, p := range pods {
		// Gone at once, as a kubelet would confirm (none runs here).
		if err := env.kube.CoreV1().Pods(ns).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}); err != nil {
			t.Fatal(err)
		}
	}
	// Volcano's job controller deletes the PodGroup of a job it kills.
	if err := env.vc.SchedulingV1beta1().PodGroups(ns).Delete(context.Background(), "train-"+string(train.UID), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Terminating = batchv1alpha1.JobAborted, 0
		s.Conditions = append(s.Conditions, batchv1alpha1.JobCondition{Status: batchv1alpha1.JobAborted, LastTransitionTime: ptrTo(metav1.Now())})
	})
	show(bg.wait(t), args...)

	// No job controller answers this one.
	do("job", "resume", "train", "-n", ns, "--wait", "--timeout", "5s")
	do("command", "list", "-n", ns)
	do("job", "describe", "train", "-n", ns)
	do("job", "terminate", "train", "-n", ns)
	do("job", "delete", "train", "-n", ns, "--wait")

	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "job-session.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
