// Package admission proves the queue lifecycle ValidatingAdmissionPolicies and
// 'kubectl vc install/uninstall' against a real kube-apiserver.
package admission

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/controlplane"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
)

var (
	cp         *controlplane.ControlPlane
	kubeconfig string

	setupOnce sync.Once
	setupErr  error
)

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Setup: func(e *cptest.Env) error {
		cp, kubeconfig = e.CP, e.Kubeconfig
		return nil
	}})
}

// factory returns a Factory like the one the CLI builds from its flags.
func factory(t *testing.T) util.Factory {
	t.Helper()
	return cptest.Factory(kubeconfig)
}

func vc(t *testing.T) versioned.Interface {
	return versioned.NewForConfigOrDie(cp.AdminConfig())
}

func dyn(t *testing.T) dynamic.Interface {
	return dynamic.NewForConfigOrDie(cp.AdminConfig())
}

func kube(t *testing.T) kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(cp.AdminConfig())
}

// runInstall runs 'install' with the given selection and returns its output.
func runInstall(t *testing.T, o *install.Options) (string, error) {
	t.Helper()
	return cptest.Install(context.Background(), factory(t), o)
}

// setup installs the CRDs and policies once per package. Install returns
// only once the API server enforces them, so the first queue is created
// without retrying and a rule is in force at once; only the Closed state of
// that queue reaches the param policies a moment later (params come from
// the API server's informer cache).
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		if _, setupErr = runInstall(t, &install.Options{}); setupErr != nil {
			return
		}
		ctx := context.Background()
		c := vc(t)
		probe := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "probe-closed"}}
		if setupErr = createQueueWithState(ctx, c, probe, schedulingv1beta1.QueueStateClosed); setupErr != nil {
			setupErr = fmt.Errorf("first queue after install: %w", setupErr)
			return
		}
		self := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "probe-self"}, Spec: schedulingv1beta1.QueueSpec{Parent: "probe-self"}}
		if _, err := c.SchedulingV1beta1().Queues().Create(ctx, self, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil || !strings.Contains(err.Error(), "cannot be its own parent") {
			setupErr = fmt.Errorf("right after install, a queue that is its own parent got %v, want the vc-queue-spec refusal", err)
			return
		}
		setupErr = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "probe-closed"}}
			_, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err != nil && strings.Contains(err.Error(), "accepts no new work"), nil
		})
	})
	if setupErr != nil {
		t.Fatalf("setup: %v", setupErr)
	}
}

// createQueueWithState creates a queue and writes its status, standing in for
// the queue controller, which does not run here.
func createQueueWithState(ctx context.Context, c versioned.Interface, q *schedulingv1beta1.Queue, state schedulingv1beta1.QueueState) error {
	created, err := c.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = c.SchedulingV1beta1().Queues().Get(ctx, q.Name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	if state == "" {
		return nil
	}
	return setState(ctx, c, created.Name, state)
}

func setState(ctx context.Context, c versioned.Interface, name string, state schedulingv1beta1.QueueState) error {
	q, err := c.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	q.Status.State = state
	_, err = c.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{})
	return err
}

// mustDeny asserts that err is an admission denial carrying want, and that
// the CLI would print it on one line.
func mustDeny(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("request admitted, want denial containing %q", want)
	}
	msg := util.Message(err)
	if !strings.Contains(msg, want) {
		t.Fatalf("denial %q does not contain %q", msg, want)
	}
	if strings.Contains(msg, "\n") {
		t.Fatalf("message is not one line: %q", msg)
	}
	if !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
		t.Fatalf("not denied by a ValidatingAdmissionPolicy: %v", err)
	}
}

func mustAdmit(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("request denied: %v", err)
	}
}

// eventually retries a request that depends on param objects the API server
// sees through its informers, until it yields the wanted outcome (bounded).
func eventually(t *testing.T, wantDenied bool, do func() error) error {
	t.Helper()
	var last error
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = do()
		return (last != nil) == wantDenied, nil
	})
	return last
}

func mustGetQueue(t *testing.T, name string) *schedulingv1beta1.Queue {
	q, err := vc(t).SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}
