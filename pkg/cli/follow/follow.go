// Package follow is what every 'list --watch' does after printing the
// list: it watches the same objects from the list's resourceVersion and
// hands each change to the command, until the user interrupts it.
//
// The watch is client-go's RetryWatcher: an API server ends every watch
// after its request timeout (30–60 minutes by default), and a plain watch
// would make 'list --watch' exit then, silently, in the middle of a
// user's session or a script's loop. The RetryWatcher starts a new watch
// from the last resourceVersion it delivered, so nothing is missed or
// printed twice; only a watch the server can no longer resume (its
// resourceVersion expired, or the request is refused) ends the command,
// with one line saying why.
package follow

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// WatchFunc is one Watch call of a typed client, e.g. Queues().Watch.
type WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// Start opens the retrying watch of fn with opts from resourceVersion rv.
// Callers that batch events (queue tree) read its ResultChan and pass each
// event through EventError; the others use Each.
func Start(ctx context.Context, rv string, opts metav1.ListOptions, fn WatchFunc) (watch.Interface, error) {
	// The RetryWatcher logs through the context's logger: a watch it
	// retries (a connection reset) and one it gives up on (a refusal) are
	// both logged at error level, which klog would print on stderr beside
	// the command's own line. What ends the watch reaches the user as
	// that line (EventError); retries are the point of the watcher.
	ctx = klog.NewContext(ctx, logr.Discard())
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			// The RetryWatcher sets the resourceVersion and bookmarks; the
			// selectors are the command's.
			o.LabelSelector, o.FieldSelector = opts.LabelSelector, opts.FieldSelector
			return fn(ctx, o)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("watch: %s", util.Message(err))
	}
	return w, nil
}

// ErrEnded is returned when the watch's channel closes while ctx is still
// live (the RetryWatcher gave up without an error event).
var ErrEnded = errors.New("watch ended")

// EventError is the error an event ends the watch with: nil for a change,
// one line with the server's reason for an Error event.
func EventError(ev watch.Event) error {
	if ev.Type != watch.Error {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrEnded, util.Message(apierrors.FromObject(ev.Object)))
}

// Each watches fn's objects from rv (see Start) and calls each for every
// object of type P added, modified or deleted, in order, until ctx ends
// (nil: an interrupted watch is how 'list --watch' normally stops), each
// fails (its error), or the watch cannot go on (one line).
func Each[P runtime.Object](ctx context.Context, rv string, opts metav1.ListOptions, fn WatchFunc, each func(watch.EventType, P) error) error {
	w, err := Start(ctx, rv, opts, fn)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return ErrEnded
			}
			if err := EventError(ev); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			obj, ok := ev.Object.(P)
			if !ok {
				// Bookmarks are consumed by the RetryWatcher; anything else
				// of another type is not ours to print.
				continue
			}
			if err := each(ev.Type, obj); err != nil {
				return err
			}
		}
	}
}

// Only is the filter of a watch of named objects ('list NAME... --watch'):
// it keeps the objects called one of names, or every object when names is
// empty.
func Only(names []string) func(name string) bool {
	if len(names) == 0 {
		return func(string) bool { return true }
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	return func(name string) bool { return want[name] }
}
