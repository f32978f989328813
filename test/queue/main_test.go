// Package queue proves the queue feature against the real local API
// server: the queue controller as real 'kubectl vc serve' processes (the
// built binary), with Commands written as vcctl writes them, and the
// queue commands ('kubectl vc queue ...', the cli_*_test.go files) run as
// a user runs the binary, with the test playing the controller where one
// is needed.
package queue

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

var (
	cp         *controlplane.ControlPlane
	vcBinary   string
	kubeconfig string
)

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Binary: true, Setup: func(e *cptest.Env) error {
		cp, vcBinary, kubeconfig = e.CP, e.Binary, e.Kubeconfig
		return setupCLI(e)
	}})
}

// fresh makes a test repeatable in one process (go test -count=N) and
// independent of the tests before it: everything it leaves on the shared
// control plane (queues but root and default, podgroups, Commands) is
// deleted when it ends, after the serve processes it started are stopped.
// Every test calls it first, before it starts any serve, so that the
// deletion runs last.
func fresh(t testing.TB) {
	t.Helper()
	queues.ResetAfter(t, env.vc)
}

func clients(t testing.TB) (versioned.Interface, kubernetes.Interface) {
	t.Helper()
	return versioned.NewForConfigOrDie(cp.AdminConfig()), kubernetes.NewForConfigOrDie(cp.AdminConfig())
}

// proc is a running 'kubectl-vc serve'.
// startServe starts serve with the admin kubeconfig (unless args name
// another) and waits for /readyz; it is killed when the test ends.
func startServe(t testing.TB, args ...string) *cptest.Serve {
	t.Helper()
	return cptest.StartServe(t, vcBinary, kubeconfig, args...)
}

func eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	queues.Eventually(t, what, cond)
}

var ctx = context.Background()

func createQueue(t testing.TB, vc versioned.Interface, name, parent string) *v1beta1.Queue {
	t.Helper()
	return queues.Create(t, vc, name, parent)
}

// command creates a Command as vcctl and 'kubectl vc queue open|close' do.
func command(t testing.TB, vc versioned.Interface, q *v1beta1.Queue, action string) *busv1alpha1.Command {
	t.Helper()
	return queues.Command(t, vc, q, action)
}

func commandGone(t testing.TB, vc versioned.Interface, cmd *busv1alpha1.Command) {
	t.Helper()
	queues.CommandGone(t, vc, cmd)
}

func getQueue(t testing.TB, vc versioned.Interface, name string) *v1beta1.Queue {
	t.Helper()
	return queues.Get(t, vc, name)
}

func waitState(t testing.TB, vc versioned.Interface, name string, want v1beta1.QueueState) *v1beta1.Queue {
	t.Helper()
	return queues.WaitState(t, vc, name, want)
}

// timeoutWait is the --timeout of the CLI runs whose wait is meant to time
// out, for the tests of what the timeout then says. Before it expires the
// CLI must have listed the queue (and, where the test says so, the
// controller must have taken the Command): on a loaded two-core machine a
// process can stall for 2-3 s, so a wait of 2 or 3 s can end before
// either happened, and the message then tells of that instead.
const timeoutWait = "10s"

var barriers atomic.Int64

// controllerSawQueues waits until the queue controller's cache holds every
// queue write made before the call. The controller does not resync a queue
// for a status change made by someone else (setState), so nothing it
// writes shows that it has seen one; a Command sent at once may be decided
// on the state its cache had before, which is a different transition from
// the one under test. Its queue informer receives all queues on one watch,
// in resourceVersion order, and syncs a new queue only after that event:
// once it has made a queue created after the write Open, its cache holds
// the write too.
func controllerSawQueues(t testing.TB, vc versioned.Interface) {
	t.Helper()
	q := createQueue(t, vc, fmt.Sprintf("barrier-%d", barriers.Add(1)), "")
	waitState(t, vc, q.Name, v1beta1.QueueStateOpen)
}

// waitCounts waits until the controller has written the queue's status
// with these podgroup counts (and state): it has then seen those
// podgroups, and a Command sent now is decided on them. The controller
// counts podgroups from its own watch, which may lag behind a create just
// made; a CloseQueue it takes before it sees the queue's podgroups closes
// the queue to Closed, not Closing, and a Closed queue stays Closed.
func waitCounts(t testing.TB, vc versioned.Interface, name string, want v1beta1.QueueStatus) {
	t.Helper()
	eventually(t, fmt.Sprintf("queue %s %s with podgroups inqueue %d pending %d running %d unknown %d completed %d",
		name, want.State, want.Inqueue, want.Pending, want.Running, want.Unknown, want.Completed), func() (bool, error) {
		s := getQueue(t, vc, name).Status
		return s.State == want.State && s.Inqueue == want.Inqueue && s.Pending == want.Pending &&
			s.Running == want.Running && s.Unknown == want.Unknown && s.Completed == want.Completed, nil
	})
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
