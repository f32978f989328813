package job

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// plainPod makes a pod that is not a Volcano Job's, with the given
// annotations.
func plainPod(t *testing.T, ns, name string, annotations map[string]string) {
	t.Helper()
	_, err := env.kube.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPodList: the pods of a job by label; the pods of a queue by the
// queue label, the queue annotations, or their PodGroup's queue; pods
// Volcano does not schedule are left out.
func TestPodList(t *testing.T) {
	a, b := namespace(t, "job-pods-a"), namespace(t, "job-pods-b")
	train := makeJob(t, a, "train", "research", 2, batchv1alpha1.JobRunning)
	pod(t, train, "worker", 0, "node-a", corev1.PodRunning)
	pod(t, train, "worker", 1, "", corev1.PodPending)
	eval := makeJob(t, b, "eval", "prod", 1, batchv1alpha1.JobRunning)
	pod(t, eval, "worker", 0, "node-b", corev1.PodRunning)
	plainPod(t, a, "annotated", map[string]string{"scheduling.volcano.sh/queue-name": "research"})
	plainPod(t, a, "short-annotated", map[string]string{"volcano.sh/queue-name": "prod"})
	plainPod(t, a, "grouped", map[string]string{"scheduling.k8s.io/group-name": "pg-research"})
	plainPod(t, a, "unrelated", nil)
	_, err := env.vc.SchedulingV1beta1().PodGroups(a).Create(context.Background(), &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-research", Namespace: a},
		Spec:       schedulingv1beta1.PodGroupSpec{MinMember: 1, Queue: "research"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	r := mustVC(t, "pod", "list", "-n", a, "--job", "train")
	got := rows(r.Stdout)
	if len(got) != 3 || strings.Join(got[0], " ") != "NAME JOB TASK QUEUE PHASE NODE AGE" ||
		strings.Join(got[1][:6], " ") != "train-worker-0 train worker research Running node-a" ||
		strings.Join(got[2][:6], " ") != "train-worker-1 train worker research Pending <none>" {
		t.Errorf("pod list --job train:\n%s", r.Stdout)
	}
	names := func(args ...string) string {
		t.Helper()
		r := mustVC(t, append([]string{"pod", "list", "-o", "name"}, args...)...)
		return strings.TrimSpace(strings.ReplaceAll(r.Stdout, "pod/", ""))
	}
	if got := names("-n", a); got != "annotated\ngrouped\nshort-annotated\ntrain-worker-0\ntrain-worker-1" {
		t.Errorf("pod list -n %s (unrelated left out):\n%s", a, got)
	}
	if got := names("-n", a, "--queue", "research"); got != "annotated\ngrouped\ntrain-worker-0\ntrain-worker-1" {
		t.Errorf("pod list --queue research:\n%s", got)
	}
	if got := names("-A", "--queue", "prod"); got != "short-annotated\neval-worker-0" {
		t.Errorf("pod list -A --queue prod:\n%s", got)
	}
	r = mustVC(t, "pod", "list", "-A", "--queue", "prod", "-o", "wide", "--no-headers")
	if rs := rows(r.Stdout); len(rs) != 2 || rs[0][0] != a || rs[1][0] != b || rs[1][8] != "eval-"+string(eval.UID) || rs[0][8] != "<none>" {
		t.Errorf("pod list -A -o wide:\n%s", r.Stdout)
	}
	r = mustVC(t, "pod", "list", "-n", a, "--job", "nope")
	if r.Stdout != "" || r.Stderr != "No Volcano pods found in "+a+" namespace.\n" {
		t.Errorf("no pods:\n%s", r)
	}
	mustFail(t, "--job cannot be combined with --all-namespaces", "pod", "list", "-A", "--job", "train")
	mustFail(t, `invalid --queue "R"`, "pod", "list", "--queue", "R")
	mustFail(t, `invalid --job: invalid job name "T"`, "pod", "list", "--job", "T")
}
