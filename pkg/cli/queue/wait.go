package queue

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// waiter is what a queue --wait needs: the clients (kube for events; nil
// or forbidden leaves them out) and the namespace of the Commands written.
type waiter struct {
	vc               versioned.Interface
	kube             kubernetes.Interface
	commandNamespace string
	timeout          time.Duration
	errOut           io.Writer
}

// newWaiter resolves the kube client of f for events; without one the
// timeouts say less but still say where each queue was left.
func newWaiter(f util.Factory, vc versioned.Interface, commandNamespace string, timeout time.Duration, errOut io.Writer) waiter {
	var kc kubernetes.Interface
	if f != nil {
		if c, err := f.KubeClient(); err == nil {
			kc = c
		}
	}
	return waiter{vc: vc, kube: kc, commandNamespace: commandNamespace, timeout: timeout, errOut: errOut}
}

// spec is a wait on the named queues, explained on timeout.
func (w waiter) spec(names []string) wait.Spec {
	since := time.Now()
	s := wait.SpecOf(Kind, w.vc, "", names, w.timeout)
	s.Explain = func(ctx context.Context, name string) string { return w.explain(ctx, name, since) }
	return s
}

// explain says why a queue did not get where a wait wanted it: its
// Commands still pending (none taken means no queue controller acts), and
// the last Warning a controller recorded on it since the wait began or on
// a pending Command at all (e.g. WaitingForParent).
func (w waiter) explain(ctx context.Context, name string, since time.Time) string {
	var parts []string
	var pending []busv1alpha1.Command
	if cmds, err := w.vc.BusV1alpha1().Commands(w.commandNamespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, c := range cmds.Items {
			if t := c.TargetObject; t != nil && t.Kind == "Queue" && t.Name == name {
				pending = append(pending, c)
			}
		}
		sort.Slice(pending, func(i, j int) bool { return pending[i].CreationTimestamp.Before(&pending[j].CreationTimestamp) })
	}
	var reported *corev1.Event
	if w.kube != nil {
		latest := func(q vcprinters.EventQuery, after time.Time) {
			evs, err := vcprinters.LatestWarnings(ctx, w.kube, q)
			if err != nil {
				return
			}
			for _, e := range evs {
				t := vcprinters.LastSeen(&e)
				if t.Before(after) {
					continue
				}
				if reported == nil || vcprinters.LastSeen(reported).Before(t) {
					reported = e.DeepCopy()
				}
			}
		}
		latest(vcprinters.EventQuery{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Queue", Name: name}, since.Add(-time.Second))
		for _, c := range pending {
			latest(vcprinters.EventQuery{APIVersion: busv1alpha1.SchemeGroupVersion.String(), Kind: "Command", Namespace: c.Namespace, Name: c.Name}, time.Time{})
		}
	}
	if len(pending) > 0 {
		var refs []string
		for _, c := range pending {
			refs = append(refs, fmt.Sprintf("%s %s/%s", c.Action, c.Namespace, c.Name))
		}
		parts = append(parts, "Command "+strings.Join(refs, ", ")+" still pending")
	}
	switch {
	case reported != nil:
		parts = append(parts, fmt.Sprintf("the controller reported %s: %s", reported.Reason, reported.Message))
	case len(pending) > 0:
		parts = append(parts, "no controller has taken it or reported why: is a queue controller running? see 'kubectl vc doctor'")
	}
	return strings.Join(parts, "; ")
}

// describeProgress says where a queue stands, including what still holds a
// Closing queue: its podgroups that have not completed.
func describeProgress(q *schedulingv1beta1.Queue) string {
	state := rules.StateOrOpen(q.Status.State)
	c := statusCounts(q)
	if state == schedulingv1beta1.QueueStateClosing && c.Active() > 0 {
		return fmt.Sprintf("%s, %d podgroup(s) still in the queue (inqueue %d, pending %d, running %d, unknown %d)",
			state, c.Active(), c.Inqueue, c.Pending, c.Running, c.Unknown)
	}
	return string(state)
}

// forState watches the queues until each has status.state == target,
// writing a progress line to errOut whenever a queue's state or remaining
// podgroups change. On timeout its one-line error names the queues that did
// not get there, where each was left, and what the controller reported.
func (w waiter) forState(ctx context.Context, names []string, target schedulingv1beta1.QueueState) error {
	return wait.For(ctx, w.spec(names), wait.Condition[*schedulingv1beta1.Queue]{
		Target: string(target),
		Progress: func(q *schedulingv1beta1.Queue) (string, bool) {
			return describeProgress(q), rules.StateOrOpen(q.Status.State) == target
		},
		Unseen: "no status seen",
	}, w.errOut)
}

// forDeletion watches until every named queue is gone.
func (w waiter) forDeletion(ctx context.Context, names []string) error {
	return wait.Deleted[*schedulingv1beta1.Queue](ctx, w.spec(names), "finalizers or a stuck controller may hold them")
}
