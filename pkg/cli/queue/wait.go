package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DefaultWaitTimeout bounds --wait when --timeout is not given.
const DefaultWaitTimeout = 5 * time.Minute

// queueListWatch watches the named queue only when there is one, and all
// queues otherwise (one watch instead of one per queue).
func queueListWatch(c versioned.Interface, names []string) cache.ListerWatcher {
	sel := fields.Everything()
	if len(names) == 1 {
		sel = fields.OneTermEqualSelector("metadata.name", names[0])
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel.String()
			return c.SchedulingV1beta1().Queues().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel.String()
			return c.SchedulingV1beta1().Queues().Watch(ctx, o)
		},
	}
}

// describeProgress says where a queue stands, including what still holds a
// Closing queue: its podgroups that have not completed.
func describeProgress(q *schedulingv1beta1.Queue) string {
	state := stateOf(q)
	c := statusCounts(q)
	if state == schedulingv1beta1.QueueStateClosing && c.Active() > 0 {
		return fmt.Sprintf("%s, %d podgroup(s) still in the queue (inqueue %d, pending %d, running %d, unknown %d)",
			state, c.Active(), c.Inqueue, c.Pending, c.Running, c.Unknown)
	}
	return string(state)
}

// waitForState watches the queues until each has status.state == target,
// writing a progress line to errOut whenever a queue's state or remaining
// podgroups change. It returns a one-line error on timeout that names the
// queues that did not get there and their current state.
func waitForState(ctx context.Context, c versioned.Interface, names []string, target schedulingv1beta1.QueueState, timeout time.Duration, errOut io.Writer) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, timeout)
	defer cancel()

	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	last := map[string]string{} // last progress line per queue
	done := map[string]bool{}
	var gone string
	_, err := watchtools.UntilWithSync(ctx, queueListWatch(c, names), &schedulingv1beta1.Queue{}, nil,
		func(ev watch.Event) (bool, error) {
			q, ok := ev.Object.(*schedulingv1beta1.Queue)
			if !ok || !want[q.Name] {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				gone = q.Name
				return false, fmt.Errorf("queue %q was deleted while waiting for it to be %s", q.Name, target)
			}
			p := describeProgress(q)
			if last[q.Name] != p {
				last[q.Name] = p
				fmt.Fprintf(errOut, "queue/%s: %s\n", q.Name, p)
			}
			done[q.Name] = stateOf(q) == target
			for n := range want {
				if !done[n] {
					return false, nil
				}
			}
			return true, nil
		})
	if err == nil {
		return nil
	}
	if gone != "" {
		return util.UsageErrorf("%s", err.Error())
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		var pending []string
		for _, n := range names {
			if !done[n] {
				now := last[n]
				if now == "" {
					now = "no status seen"
				}
				pending = append(pending, fmt.Sprintf("%s is %s", n, now))
			}
		}
		sort.Strings(pending)
		return util.UsageErrorf("timed out after %s waiting for queue(s) to be %s: %s (is the queue controller running? see 'kubectl vc command list -A')",
			timeout, target, strings.Join(pending, "; "))
	}
	return err
}

// waitForDeletion watches until every named queue is gone.
func waitForDeletion(ctx context.Context, c versioned.Interface, names []string, timeout time.Duration) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, timeout)
	defer cancel()
	left := map[string]bool{}
	for _, n := range names {
		left[n] = true
	}
	_, err := watchtools.UntilWithSync(ctx, queueListWatch(c, names), &schedulingv1beta1.Queue{},
		func(store cache.Store) (bool, error) {
			for n := range left {
				if _, exists, _ := store.GetByKey(n); !exists {
					delete(left, n)
				}
			}
			return len(left) == 0, nil
		},
		func(ev watch.Event) (bool, error) {
			if q, ok := ev.Object.(*schedulingv1beta1.Queue); ok && ev.Type == watch.Deleted {
				delete(left, q.Name)
			}
			return len(left) == 0, nil
		})
	if err != nil && ctx.Err() != nil {
		var rest []string
		for n := range left {
			rest = append(rest, n)
		}
		sort.Strings(rest)
		return util.UsageErrorf("timed out after %s waiting for queue(s) %s to be deleted (finalizers or a stuck controller may hold them)", timeout, strings.Join(rest, ", "))
	}
	return err
}
