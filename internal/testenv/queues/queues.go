// Package queues holds what the suites that work with queues through the
// API share: creating queues, asking for a state change with a Command as
// vcctl does, waiting for the controller's answer, and playing the
// controller where none runs.
package queues

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	applyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Eventually polls cond until it holds; the minute only bounds a broken
// run, it is not a measure of speed.
func Eventually(t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// Create creates a queue of weight 1 under parent ("" leaves it to the
// controller's default).
func Create(t testing.TB, vc versioned.Interface, name, parent string) *v1beta1.Queue {
	t.Helper()
	q, err := vc.SchedulingV1beta1().Queues().Create(context.Background(), &v1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1beta1.QueueSpec{Weight: 1, Parent: parent},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Get reads a queue, failing the test when it cannot.
func Get(t testing.TB, vc versioned.Interface, name string) *v1beta1.Queue {
	t.Helper()
	q, err := vc.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// Command creates a Command in namespace default as vcctl and 'kubectl vc
// queue open|close' write it: generateName from queue and action, and a
// controller reference to the queue as owner and target.
func Command(t testing.TB, vc versioned.Interface, q *v1beta1.Queue, action string) *busv1alpha1.Command {
	t.Helper()
	ref := metav1.NewControllerRef(q, v1beta1.SchemeGroupVersion.WithKind("Queue"))
	cmd, err := vc.BusV1alpha1().Commands("default").Create(context.Background(), &busv1alpha1.Command{
		ObjectMeta:   metav1.ObjectMeta{GenerateName: q.Name + "-" + strings.ToLower(action) + "-", OwnerReferences: []metav1.OwnerReference{*ref}},
		Action:       action,
		TargetObject: ref,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// CommandGone waits until the controller has consumed (deleted) cmd.
func CommandGone(t testing.TB, vc versioned.Interface, cmd *busv1alpha1.Command) {
	t.Helper()
	Eventually(t, "Command "+cmd.Name+" deleted", func() (bool, error) {
		_, err := vc.BusV1alpha1().Commands(cmd.Namespace).Get(context.Background(), cmd.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// WaitState waits until the queue's status.state is want and returns it.
func WaitState(t testing.TB, vc versioned.Interface, name string, want v1beta1.QueueState) *v1beta1.Queue {
	t.Helper()
	var q *v1beta1.Queue
	Eventually(t, fmt.Sprintf("queue %s %s", name, want), func() (bool, error) {
		var err error
		q, err = vc.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && q.Status.State == want, err
	})
	return q
}

// ApplyStatus plays the queue controller: it applies the queue's status
// (state and running count) with the controller's field manager.
func ApplyStatus(t testing.TB, vc versioned.Interface, name string, state v1beta1.QueueState, running int32) {
	t.Helper()
	ac := applyv1beta1.Queue(name).WithStatus(applyv1beta1.QueueStatus().WithState(state).WithRunning(running))
	if _, err := vc.SchedulingV1beta1().Queues().ApplyStatus(context.Background(), ac,
		metav1.ApplyOptions{FieldManager: keys.QueueControllerManager, Force: true}); err != nil {
		t.Fatalf("apply status of %s: %v", name, err)
	}
}

// ResetAfter registers a cleanup, to run after the test's other cleanups
// (so after the serve processes it started are stopped, when called before
// they start), that deletes every queue but root and default and every
// podgroup and Command in every namespace. The suites share one control
// plane across tests and across runs of a test in one process (go test
// -count=N), so whatever a test leaves behind would otherwise clash with
// the next run's fixed names ("already exists") or be taken up by the next
// test's controller. Nothing holds these objects (no finalizers), so they
// are gone when the calls return.
func ResetAfter(t testing.TB, vc versioned.Interface) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		fail := func(what string, err error) {
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: %s: %v", what, err)
			}
		}
		cmds, err := vc.BusV1alpha1().Commands(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		fail("list Commands", err)
		if err == nil {
			for _, c := range cmds.Items {
				fail("delete Command "+c.Namespace+"/"+c.Name, vc.BusV1alpha1().Commands(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{}))
			}
		}
		pgs, err := vc.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		fail("list podgroups", err)
		if err == nil {
			for _, pg := range pgs.Items {
				fail("delete podgroup "+pg.Namespace+"/"+pg.Name, vc.SchedulingV1beta1().PodGroups(pg.Namespace).Delete(ctx, pg.Name, metav1.DeleteOptions{}))
			}
		}
		qs, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
		fail("list queues", err)
		if err == nil {
			for _, q := range qs.Items {
				if q.Name != keys.RootQueue && q.Name != keys.DefaultQueue {
					fail("delete queue "+q.Name, vc.SchedulingV1beta1().Queues().Delete(ctx, q.Name, metav1.DeleteOptions{}))
				}
			}
		}
	})
}

// CommandsFor returns the Commands, in every namespace, whose target is
// the named queue.
func CommandsFor(t testing.TB, vc versioned.Interface, queue string) []busv1alpha1.Command {
	t.Helper()
	list, err := vc.BusV1alpha1().Commands(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []busv1alpha1.Command
	for _, c := range list.Items {
		if c.TargetObject != nil && c.TargetObject.Name == queue {
			out = append(out, c)
		}
	}
	return out
}
