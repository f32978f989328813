// Package job runs 'kubectl vc job' and 'kubectl vc pod' as a user runs
// them (the built binary) against the real local API server. No job
// controller runs here: where the tests need one they play Volcano's, as
// it behaves (take the Command by deleting it, then write the job's
// status), the way the queue tests play the scheduler.
package job

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/namespaces"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// env is what every test of the package shares: one control plane with
// our CRDs (the Job CRD included), the built binary and an admin
// kubeconfig.
var env struct {
	cp    *controlplane.ControlPlane
	dir   string
	bin   string
	admin string
	alice string
	vc    versioned.Interface
	kube  kubernetes.Interface
}

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		env.cp, env.dir, env.bin, env.admin = e.CP, e.Dir, e.Binary, e.Kubeconfig
		env.alice = filepath.Join(e.Dir, "alice.kubeconfig")
		if err := e.CP.WriteKubeconfig(env.alice, controlplane.UnprivilegedUser); err != nil {
			return err
		}
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		return nil
	}})
}

// result is what one run of the binary produced.
type result = binary.Result

// command prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func command(kubeconfig string, args ...string) *exec.Cmd {
	return binary.Command(env.bin, env.dir, kubeconfig, args...)
}

func run(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	return binary.Run(t, cmd)
}

// vc runs the binary as the admin.
func vc(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, command(env.admin, args...))
}

// mustVC runs the binary as the admin and fails the test unless it succeeds.
func mustVC(t *testing.T, args ...string) result {
	t.Helper()
	r := vc(t, args...)
	if r.Code != 0 {
		t.Fatalf("kubectl-vc %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// mustFail runs the binary and checks the failure as a user sees it:
// non-zero exit, nothing on stdout, one line on stderr containing want.
func mustFail(t *testing.T, want string, args ...string) {
	t.Helper()
	r := vc(t, args...)
	lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
	if r.Code == 0 || r.Stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(r.Stderr, want) {
		t.Errorf("kubectl-vc %s: want exit 1, no output and one error line containing %q; got:\n%s", strings.Join(args, " "), want, r)
	}
}

// background is a run of the binary that the test watches while it runs.
type background struct {
	cmd      *exec.Cmd
	out, err binary.SyncBuffer
	done     chan struct{}
	code     int
}

func start(t *testing.T, args ...string) *background {
	t.Helper()
	b := &background{cmd: command(env.admin, args...), done: make(chan struct{})}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.err
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := b.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			b.code = ee.ExitCode()
		} else if err != nil {
			b.code = -1
		}
		close(b.done)
	}()
	t.Cleanup(func() {
		_ = b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// wait waits for the run to end and returns what it did.
func (b *background) wait(t *testing.T) result {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v did not end; stderr so far:\n%s", b.cmd.Args, b.err.String())
	}
	return result{Stdout: b.out.String(), Stderr: b.err.String(), Code: b.code}
}

// waitStderr waits until the run has written want on stderr.
func (b *background) waitStderr(t *testing.T, want string) {
	t.Helper()
	poll(t, "stderr to contain "+want, func() (bool, error) {
		select {
		case <-b.done:
			return false, fmt.Errorf("ended (exit %d) before writing %q; stderr:\n%s", b.code, want, b.err.String())
		default:
		}
		return strings.Contains(b.err.String(), want), nil
	})
}

// poll calls cond until it is true, bounded by a deadline.
func poll(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// namespace is a namespace of this run of the test, emptied and deleted
// after it (internal/testenv/namespaces); the first run keeps the plain name,
// the one the docs show.
func namespace(t *testing.T, name string) string {
	t.Helper()
	return namespaces.PerRun(t, env.kube, env.vc, name)
}

// queue makes a queue with the given state (empty: no status), as the
// queue controller would have written it.
func queue(t *testing.T, name string, state schedulingv1beta1.QueueState) {
	t.Helper()
	ctx := context.Background()
	q, err := env.vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       schedulingv1beta1.QueueSpec{Weight: 1},
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		q, err = env.vc.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	if state != "" {
		q.Status.State = state
		if _, err := env.vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// jobSpec is a job as a user writes it: tasks of busybox pods.
func jobSpec(ns, name, queueName string, tasks map[string]int32) *batchv1alpha1.Job {
	j := &batchv1alpha1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: queueName, MaxRetry: 3},
	}
	for _, task := range sortedKeys(tasks) {
		j.Spec.Tasks = append(j.Spec.Tasks, batchv1alpha1.TaskSpec{
			Name: task, Replicas: tasks[task],
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: task, Image: "busybox:1.36",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("500m")}}}},
			}},
		})
		j.Spec.MinAvailable += tasks[task]
	}
	return j
}

func sortedKeys(m map[string]int32) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// makeJob creates a one-task job of n pods in ns and gives it the status
// the job controller would have written for phase (empty: no status yet).
func makeJob(t *testing.T, ns, name, queueName string, n int32, phase batchv1alpha1.JobPhase) *batchv1alpha1.Job {
	t.Helper()
	j, err := env.vc.BatchV1alpha1().Jobs(ns).Create(context.Background(), jobSpec(ns, name, queueName, map[string]int32{"worker": n}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase == "" {
		return j
	}
	return setStatus(t, ns, name, func(s *batchv1alpha1.JobStatus) {
		s.State.Phase = phase
		s.MinAvailable = n
		if phase == batchv1alpha1.JobRunning {
			s.Running = n
		}
	})
}

// setStatus writes the job's status as the job controller does, through
// the status subresource.
func setStatus(t *testing.T, ns, name string, change func(*batchv1alpha1.JobStatus)) *batchv1alpha1.Job {
	t.Helper()
	var out *batchv1alpha1.Job
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		j, err := env.vc.BatchV1alpha1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(&j.Status)
		j.Status.State.LastTransitionTime = metav1.Now()
		out, err = env.vc.BatchV1alpha1().Jobs(ns).UpdateStatus(context.Background(), j, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// commandsOf lists the Commands of ns that target job name.
func commandsOf(t *testing.T, ns, name string) []busv1alpha1.Command {
	t.Helper()
	list, err := env.vc.BusV1alpha1().Commands(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []busv1alpha1.Command
	for _, c := range list.Items {
		if c.TargetObject != nil && c.TargetObject.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// take plays the first half of Volcano's job controller for a Command: it
// waits for the one Command on job ns/name, checks its action, and
// deletes it, as the controller does before it acts.
func take(t *testing.T, ns, name, action string) busv1alpha1.Command {
	t.Helper()
	var cm busv1alpha1.Command
	poll(t, "a Command on job "+name, func() (bool, error) {
		cmds := commandsOf(t, ns, name)
		if len(cmds) > 1 {
			return false, fmt.Errorf("%d Commands on job %s, want one", len(cmds), name)
		}
		if len(cmds) == 1 {
			cm = cmds[0]
		}
		return len(cmds) == 1, nil
	})
	if cm.Action != action {
		t.Fatalf("Command %s has action %q, want %q", cm.Name, cm.Action, action)
	}
	if err := env.vc.BusV1alpha1().Commands(ns).Delete(context.Background(), cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return cm
}

// expectedRef is the owner reference and target vcctl writes for a job
// (metav1.NewControllerRef of the Job).
func expectedRef(j *batchv1alpha1.Job) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "batch.volcano.sh/v1alpha1", Kind: "Job", Name: j.Name, UID: j.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
}

// pod makes a pod as Volcano's job controller makes them for task of job
// j (labels, annotations, controller reference), on node.
func pod(t *testing.T, j *batchv1alpha1.Job, task string, index int, node string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%s-%d", j.Name, task, index), Namespace: j.Namespace,
			Labels: map[string]string{
				batchv1alpha1.JobNameLabel: j.Name, batchv1alpha1.TaskSpecLabel: task,
				batchv1alpha1.QueueNameLabel: j.Spec.Queue, batchv1alpha1.JobNamespaceLabel: j.Namespace,
				batchv1alpha1.TaskIndexLabel: fmt.Sprint(index),
			},
			Annotations: map[string]string{
				"scheduling.k8s.io/group-name": j.Name + "-" + string(j.UID),
				batchv1alpha1.JobNameLabel:     j.Name, batchv1alpha1.QueueNameLabel: j.Spec.Queue,
			},
			OwnerReferences: []metav1.OwnerReference{expectedRef(j)},
		},
		Spec: corev1.PodSpec{
			NodeName: node, SchedulerName: "volcano",
			Containers: []corev1.Container{{Name: task, Image: "busybox:1.36"}},
		},
	}
	p, err := env.kube.CoreV1().Pods(j.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase != "" {
		p.Status.Phase = phase
		if p, err = env.kube.CoreV1().Pods(j.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
