// Package wait is the one --wait of every kind: until named objects are
// deleted, or until each meets a condition on its status, over a
// ListerWatcher of the kind's own client, with the same progress lines and
// timeout messages for all kinds.
package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Object is what a wait watches: any API object with metadata.
type Object interface {
	runtime.Object
	metav1.Object
}

// ListWatch lists and watches through a kind's typed client (for example
// c.BatchV1alpha1().Jobs(ns).List and .Watch), narrowed to the one name
// when there is one, and to nothing when there are more (one watch
// instead of one per object).
func ListWatch[L runtime.Object](names []string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.ListerWatcher {
	sel := fields.Everything().String()
	if len(names) == 1 {
		sel = fields.OneTermEqualSelector("metadata.name", names[0]).String()
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return list(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return watchFn(ctx, o)
		},
	}
}

// Spec names what to wait for.
type Spec struct {
	// Kind names the objects in progress lines and messages ("job", "queue").
	Kind string
	// Namespace of the objects; empty for cluster-scoped kinds.
	Namespace string
	Names     []string
	// Timeout bounds the wait; 0 waits forever.
	Timeout time.Duration
	// ListWatch watches the objects (see ListWatch).
	ListWatch cache.ListerWatcher
	// Explain, when set, says on a timeout why the named object did not
	// get there, from what its controller reported (a Warning event, a
	// Command still pending and what was said about it); "" when nothing
	// is known. A timeout names where each object was left and this, so
	// that no wait ends in silence. It runs after the wait's own time ran
	// out, with a few seconds of its own.
	Explain func(ctx context.Context, name string) string
}

// explainTimeout bounds the requests Explain makes after a wait timed out.
const explainTimeout = 5 * time.Second

// explain runs s.Explain for name with a context of its own (the wait's
// has ended); "" without one.
func (s Spec) explain(ctx context.Context, name string) string {
	if s.Explain == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), explainTimeout)
	defer cancel()
	return s.Explain(ctx, name)
}

// Explained appends what Explain says of an object to a line about it.
func (s Spec) Explained(ctx context.Context, name, line string) (string, bool) {
	if e := s.explain(ctx, name); e != "" {
		return line + " (" + e + ")", true
	}
	return line, false
}

// Key is the key of a named object in an informer's store.
func (s Spec) Key(name string) string {
	if s.Namespace == "" {
		return name
	}
	return s.Namespace + "/" + name
}

// Deleted waits until every named object is gone. On timeout it names the
// ones left, where each was left (being deleted or not, the finalizers
// holding it), what its controller reported (Spec.Explain), and, when
// nothing was reported, what may hold them (hint).
func Deleted[T Object](parent context.Context, s Spec, hint string) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(parent, s.Timeout)
	defer cancel()
	left := map[string]T{}
	for _, n := range s.Names {
		var none T
		left[n] = none
	}
	_, err := watchtools.UntilWithSync(ctx, s.ListWatch, newObject[T](),
		func(store cache.Store) (bool, error) {
			for n := range left {
				if o, exists, _ := store.GetByKey(s.Key(n)); !exists {
					delete(left, n)
				} else if t, ok := o.(T); ok {
					left[n] = t
				}
			}
			return len(left) == 0, nil
		},
		func(ev watch.Event) (bool, error) {
			o, ok := ev.Object.(T)
			if !ok {
				return false, nil
			}
			if _, waiting := left[o.GetName()]; !waiting {
				return false, nil
			}
			if ev.Type == watch.Deleted {
				delete(left, o.GetName())
			} else {
				left[o.GetName()] = o
			}
			return len(left) == 0, nil
		})
	if err != nil && ctx.Err() != nil {
		rest := make([]string, 0, len(left))
		explained := false
		for n, o := range left {
			line, ok := s.Explained(parent, n, n+" is "+leftAs(o))
			explained = explained || ok
			rest = append(rest, line)
		}
		sort.Strings(rest)
		tail := ""
		if !explained && hint != "" {
			tail = " (" + hint + ")"
		}
		return util.UsageErrorf("timed out after %s waiting for %s(s) to be deleted: %s%s", s.Timeout, s.Kind, strings.Join(rest, "; "), tail)
	}
	return err
}

// leftAs says where an object that was not deleted in time stands.
func leftAs(o Object) string {
	if o == nil || reflect.ValueOf(o).IsNil() {
		return "still there"
	}
	var parts []string
	if o.GetDeletionTimestamp() == nil {
		parts = append(parts, "still there, not being deleted")
	} else {
		parts = append(parts, "still there, being deleted")
	}
	if f := o.GetFinalizers(); len(f) > 0 {
		parts = append(parts, "held by finalizers "+strings.Join(f, ", "))
	}
	return strings.Join(parts, ", ")
}

// Condition describes a condition on an object's status: Progress says
// where the object stands (written as "kind/name: line" whenever it
// changes) and whether it got there.
type Condition[T Object] struct {
	// Target is where the objects should get, for messages ("Open").
	Target   string
	Progress func(T) (line string, done bool)
	// Unseen stands for an object of which no status was seen by the timeout.
	Unseen string
	// Hint follows the timeout message when Spec.Explain said nothing of
	// any object.
	Hint string
}

// For waits until every named object meets c, writing progress lines to
// errOut. An object deleted meanwhile ends the wait; so does the timeout,
// naming the objects that did not get there and where they stand.
func For[T Object](parent context.Context, s Spec, c Condition[T], errOut io.Writer) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(parent, s.Timeout)
	defer cancel()

	want := map[string]bool{}
	for _, n := range s.Names {
		want[n] = true
	}
	last := map[string]string{}
	done := map[string]bool{}
	var gone string
	_, err := watchtools.UntilWithSync(ctx, s.ListWatch, newObject[T](), nil,
		func(ev watch.Event) (bool, error) {
			o, ok := ev.Object.(T)
			if !ok || !want[o.GetName()] {
				return false, nil
			}
			name := o.GetName()
			if ev.Type == watch.Deleted {
				gone = name
				return false, fmt.Errorf("%s %q was deleted while waiting for it to be %s", s.Kind, name, c.Target)
			}
			line, ok := c.Progress(o)
			if last[name] != line {
				last[name] = line
				fmt.Fprintf(errOut, "%s/%s: %s\n", s.Kind, name, line)
			}
			done[name] = ok
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
		explained := false
		for _, n := range s.Names {
			if done[n] {
				continue
			}
			now := last[n]
			if now == "" {
				now = c.Unseen
			}
			line, ok := s.Explained(parent, n, fmt.Sprintf("%s is %s", n, now))
			explained = explained || ok
			pending = append(pending, line)
		}
		hint := c.Hint
		if explained {
			hint = ""
		}
		return TimedOut(s, c.Target, pending, hint)
	}
	return err
}

// TimedOut is the one message of a condition wait that ran out of time:
// pending says where each object stands ("x is Closing"), hint what to check.
func TimedOut(s Spec, target string, pending []string, hint string) error {
	sort.Strings(pending)
	return util.UsageErrorf("timed out after %s waiting for %s(s) to be %s: %s%s", s.Timeout, s.Kind, target, strings.Join(pending, "; "), hint)
}

// newObject returns an empty T (T is a pointer type such as *Job), for the
// informer's expected type.
func newObject[T Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}
