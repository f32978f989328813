// Package serve holds the integration tests of 'kubectl vc serve': real
// serve processes (the built binary) against the real local API server.
package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane/cptest"
)

var (
	cp         *controlplane.ControlPlane
	binary     string
	kubeconfig string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "serve-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, err = cptest.BuildBinary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	cptest.Main(m, func(c *controlplane.ControlPlane) {
		cp = c
		kubeconfig = filepath.Join(dir, "kubeconfig")
		if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	})
}

func clients(t testing.TB) (versioned.Interface, kubernetes.Interface) {
	t.Helper()
	return versioned.NewForConfigOrDie(cp.AdminConfig()), kubernetes.NewForConfigOrDie(cp.AdminConfig())
}

// proc is a running 'kubectl-vc serve'.
type proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	health  string
	metrics string
	log     string
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe starts serve with the admin kubeconfig (unless args name
// another) and waits for /readyz. It is stopped (SIGKILL if still running)
// when the test ends, so no process outlives the test.
func startServe(t testing.TB, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, done: make(chan struct{}), health: freePort(t), metrics: freePort(t)}
	p.log = filepath.Join(t.TempDir(), "serve.log")
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	full := []string{"serve", "--health-probe-bind-address=" + p.health, "--metrics-bind-address=" + p.metrics}
	hasKubeconfig := false
	for _, a := range args {
		hasKubeconfig = hasKubeconfig || strings.HasPrefix(a, "--kubeconfig")
	}
	if !hasKubeconfig {
		full = append(full, "--kubeconfig="+kubeconfig)
	}
	full = append(full, args...)
	p.cmd = exec.Command(binary, full...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("serve log (%v):\n%s", full, lastLines(string(b), 40))
		}
	})
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("serve exited early: %v", p.err)
		default:
		}
		resp, err := http.Get("http://" + p.health + "/readyz")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		b, _ := os.ReadFile(p.log)
		t.Fatalf("serve not ready: %v\n%s", err, lastLines(string(b), 40))
	}
	return p
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the process (a crash) and waits for it to be gone.
func (p *proc) kill() {
	if !p.exited() {
		_ = p.cmd.Process.Kill()
	}
	<-p.done
}

// terminate sends SIGTERM and waits for the exit; it returns the exit error.
func (p *proc) terminate(t testing.TB) error {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
		return nil
	}
}

// metric sums the samples of a metric whose label text contains every
// given fragment (e.g. `queue_name="q1"`).
func (p *proc) metric(t testing.TB, name string, fragments ...string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		for _, f := range fragments {
			if !strings.Contains(line, f) {
				continue lines
			}
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		sum += v
		found = true
	}
	return sum, found
}

// writes is the number of API requests of the process that could change
// something (every method but GET: POST, PUT, PATCH, DELETE).
func (p *proc) writes(t testing.TB) float64 {
	t.Helper()
	var n float64
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		v, _ := p.metric(t, "rest_client_requests_total", `method="`+m+`"`)
		n += v
	}
	return n
}

func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

var ctx = context.Background()

func createQueue(t testing.TB, vc versioned.Interface, name, parent string) *v1beta1.Queue {
	t.Helper()
	q, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1beta1.QueueSpec{Weight: 1, Parent: parent},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// command creates a Command as vcctl and 'kubectl vc queue open|close' do.
func command(t testing.TB, vc versioned.Interface, q *v1beta1.Queue, action string) *busv1alpha1.Command {
	t.Helper()
	ref := metav1.NewControllerRef(q, v1beta1.SchemeGroupVersion.WithKind("Queue"))
	cmd, err := vc.BusV1alpha1().Commands("default").Create(ctx, &busv1alpha1.Command{
		ObjectMeta:   metav1.ObjectMeta{GenerateName: q.Name + "-" + strings.ToLower(action) + "-", OwnerReferences: []metav1.OwnerReference{*ref}},
		Action:       action,
		TargetObject: ref,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

func commandGone(t testing.TB, vc versioned.Interface, cmd *busv1alpha1.Command) {
	t.Helper()
	eventually(t, "Command "+cmd.Name+" deleted", func() (bool, error) {
		_, err := vc.BusV1alpha1().Commands(cmd.Namespace).Get(ctx, cmd.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func getQueue(t testing.TB, vc versioned.Interface, name string) *v1beta1.Queue {
	t.Helper()
	q, err := vc.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func waitState(t testing.TB, vc versioned.Interface, name string, want v1beta1.QueueState) *v1beta1.Queue {
	t.Helper()
	var q *v1beta1.Queue
	eventually(t, fmt.Sprintf("queue %s %s", name, want), func() (bool, error) {
		var err error
		q, err = vc.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
		return err == nil && q.Status.State == want, err
	})
	return q
}

// setState forces a queue's status.state (as another writer could), for the
// transitions out of Unknown.
func setState(t testing.TB, vc versioned.Interface, name string, s v1beta1.QueueState) {
	t.Helper()
	patch := []byte(`{"status":{"state":"` + string(s) + `"}}`)
	if _, err := vc.SchedulingV1beta1().Queues().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

// podGroup creates a podgroup in a queue with a phase. PodGroups have no
// status subresource, so the phase is written with the object.
func podGroup(t testing.TB, vc versioned.Interface, name, queue string, phase v1beta1.PodGroupPhase) *v1beta1.PodGroup {
	t.Helper()
	pg, err := vc.SchedulingV1beta1().PodGroups("default").Create(ctx, &v1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1beta1.PodGroupSpec{MinMember: 1, Queue: queue},
		Status:     v1beta1.PodGroupStatus{Phase: phase},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

func setPhase(t testing.TB, vc versioned.Interface, name string, phase v1beta1.PodGroupPhase) {
	t.Helper()
	patch := []byte(`{"status":{"phase":"` + string(phase) + `"}}`)
	if _, err := vc.SchedulingV1beta1().PodGroups("default").Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deletePodGroup(t testing.TB, vc versioned.Interface, name string) {
	t.Helper()
	if err := vc.SchedulingV1beta1().PodGroups("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ensureNamespace(t testing.TB, kube kubernetes.Interface, name string) {
	t.Helper()
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
