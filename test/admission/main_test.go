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

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"

	// The queue index controller, run in-process (indexer).
	_ "github.com/kubectl-vc/kubectl-vc/plugins/queueindex"
	"github.com/kubectl-vc/kubectl-vc/plugins/queuewebhook"
)

var (
	cp         *controlplane.ControlPlane
	kubeconfig string
	// indexer is serve's queue index controller, running for the whole
	// package once setup has installed the policies in index mode: every
	// rule is proven as the index holds it (TestPerQueueMode proves the
	// other mode's policies).
	indexer = &runner{config: func() (controller.Config, error) {
		c, err := framework.Configure("queueindex", "--queueindex-batch-delay=50ms")
		if err != nil {
			return controller.Config{}, err
		}
		return controller.Config{Controllers: []framework.Controller{c}}, nil
	}}
	// webhook is serve's queue webhook, answering at hook.URL for the
	// whole package from before setup installs the index mode (install
	// waits until the API server calls it). It runs apart from indexer so
	// that a test may stop either alone.
	webhook = &runner{config: func() (controller.Config, error) {
		return controller.Config{WebhookAddr: hook.Addr, WebhookCertDir: hook.CertDir,
			Webhooks: []framework.Webhook{queuewebhook.New()}}, nil
	}}
	hook *cptest.Webhook

	setupOnce sync.Once
	setupErr  error
)

func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Setup: func(e *cptest.Env) error {
		cp, kubeconfig = e.CP, e.Kubeconfig
		var err error
		if hook, err = cptest.NewWebhook(e.Dir); err != nil {
			return err
		}
		e.Cleanup(indexer.stop)
		e.Cleanup(webhook.stop)
		return nil
	}})
}

// indexInstall is install of the index mode, its webhook at hook.
func indexInstall(sel install.Selection) *install.Options {
	sel.Admission, sel.WebhookURL, sel.WebhookCABundle = keys.AdmissionModeIndex, hook.URL, hook.CA
	return &install.Options{Selection: sel}
}

// runner starts and stops a part of serve in-process.
type runner struct {
	config func() (controller.Config, error)
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan error
}

func (r *runner) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return nil
	}
	c, err := r.config()
	if err != nil {
		return err
	}
	c.Kubeconfig, c.MaxRequeueNum, c.FeatureGates, c.WaitForStop = cp.AdminConfig(), -1, framework.NewFeatureGate(), true
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- controller.Run(ctx, c) }()
	return nil
}

func (r *runner) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	err := <-r.done
	r.cancel = nil
	if err != nil {
		return fmt.Errorf("serve in-process: %w", err)
	}
	return nil
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
		// serve first: install waits for its webhook to answer.
		if setupErr = webhook.start(); setupErr != nil {
			return
		}
		if setupErr = indexer.start(); setupErr != nil {
			return
		}
		if _, setupErr = runInstall(t, indexInstall(install.Selection{CRDs: true, Policies: true})); setupErr != nil {
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
	removeAfter(t)
}

// removeAfter notes the queues, and the podgroups, Jobs and Commands of
// namespace default, there are now, and deletes every other one when the
// test ends: the tests share one control plane, and a later run of a test
// in this process (go test -count=N) would find its queues as this run
// left them (moved, closed, or "already exists"). The policies guard
// deletes as they guard a user's: a queue goes only once Closed, so each
// is closed first (its status, as the queue controller writes it), and
// only once it has no child queue, which the policy reads from the API
// server's informer: a parent's delete is refused until the informer has
// seen its children go, so the deletes are repeated until every queue is
// gone (bounded: a broken run).
func removeAfter(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	c := vc(t)
	// root and default are built in: the policies never let them go.
	keep := map[string]bool{"queues/root": true, "queues/default": true}
	note := func(kind string, names []string, err error) {
		if err != nil {
			t.Fatalf("list %s: %v", kind, err)
		}
		for _, n := range names {
			keep[kind+"/"+n] = true
		}
	}
	note(names(ctx, c, "queues"))
	t.Cleanup(func() {
		del := func(kind string, names []string, err error, remove func(string) error) {
			if err != nil {
				t.Errorf("cleanup: list %s: %v", kind, err)
				return
			}
			for _, n := range names {
				if keep[kind+"/"+n] {
					continue
				}
				if err := remove(n); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("cleanup: delete %s %s: %v", kind, n, err)
				}
			}
		}
		_, pgs, err := names(ctx, c, "podgroups")
		del("podgroups", pgs, err, func(n string) error {
			return c.SchedulingV1beta1().PodGroups("default").Delete(ctx, n, metav1.DeleteOptions{})
		})
		_, jobs, err := names(ctx, c, "jobs")
		del("jobs", jobs, err, func(n string) error {
			return c.BatchV1alpha1().Jobs("default").Delete(ctx, n, metav1.DeleteOptions{})
		})
		_, cmds, err := names(ctx, c, "commands")
		del("commands", cmds, err, func(n string) error {
			return c.BusV1alpha1().Commands("default").Delete(ctx, n, metav1.DeleteOptions{})
		})
		var last error
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			list, err := c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
			if err != nil {
				last = err
				return false, nil
			}
			left := 0
			for i := range list.Items {
				q := &list.Items[i]
				if keep["queues/"+q.Name] {
					continue
				}
				left++
				if q.Status.State != schedulingv1beta1.QueueStateClosed {
					if err := setState(ctx, c, q.Name, schedulingv1beta1.QueueStateClosed); err != nil {
						last = err
						continue
					}
				}
				if err := c.SchedulingV1beta1().Queues().Delete(ctx, q.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					last = err
				}
			}
			return left == 0, nil
		})
		if err != nil {
			t.Errorf("cleanup: queues of the test not deleted: %v (last error: %v)", err, last)
		}
	})
	for _, kind := range []string{"podgroups", "jobs", "commands"} {
		note(names(ctx, c, kind))
	}
}

// names returns the names of the queues, or of the podgroups, Jobs or
// Commands of namespace default.
func names(ctx context.Context, c versioned.Interface, kind string) (string, []string, error) {
	var out []string
	var err error
	switch kind {
	case "queues":
		var l *schedulingv1beta1.QueueList
		if l, err = c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{}); err == nil {
			for _, o := range l.Items {
				out = append(out, o.Name)
			}
		}
	case "podgroups":
		var l *schedulingv1beta1.PodGroupList
		if l, err = c.SchedulingV1beta1().PodGroups("default").List(ctx, metav1.ListOptions{}); err == nil {
			for _, o := range l.Items {
				out = append(out, o.Name)
			}
		}
	case "jobs":
		l, lerr := c.BatchV1alpha1().Jobs("default").List(ctx, metav1.ListOptions{})
		if err = lerr; err == nil {
			for _, o := range l.Items {
				out = append(out, o.Name)
			}
		}
	case "commands":
		l, lerr := c.BusV1alpha1().Commands("default").List(ctx, metav1.ListOptions{})
		if err = lerr; err == nil {
			for _, o := range l.Items {
				out = append(out, o.Name)
			}
		}
	}
	return kind, out, err
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

// setState writes a queue's state as the queue controller does.
func setState(ctx context.Context, c versioned.Interface, name string, state schedulingv1beta1.QueueState) error {
	var err error
	for range 5 {
		var q *schedulingv1beta1.Queue
		if q, err = c.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		q.Status.State = state
		if _, err = c.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			return err
		}
	}
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
	// A policy, or in the index mode serve's queue webhook, for the rules
	// between a queue and its parent or children.
	if !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") && !strings.Contains(err.Error(), `webhook "`+keys.QueueWebhookName+`"`) {
		t.Fatalf("not denied by a ValidatingAdmissionPolicy or serve's queue webhook: %v", err)
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

// updateQueue changes a queue read just before, again on a conflict (as a
// user's 'kubectl edit' may meet). Any other outcome is returned.
func updateQueue(ctx context.Context, c versioned.Interface, name string, opts metav1.UpdateOptions, change func(*schedulingv1beta1.Queue)) error {
	var err error
	for range 10 {
		var q *schedulingv1beta1.Queue
		if q, err = c.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		change(q)
		if _, err = c.SchedulingV1beta1().Queues().Update(ctx, q, opts); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}
