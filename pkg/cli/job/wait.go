package job

import (
	"context"
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

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DefaultWaitTimeout bounds --wait when --timeout is not given.
const DefaultWaitTimeout = 5 * time.Minute

// nameSelector selects one object by name when there is one name, and
// every object otherwise (one watch instead of one per object).
func nameSelector(names []string) string {
	if len(names) == 1 {
		return fields.OneTermEqualSelector("metadata.name", names[0]).String()
	}
	return fields.Everything().String()
}

func jobListWatch(c versioned.Interface, ns string, names []string) cache.ListerWatcher {
	sel := nameSelector(names)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.BatchV1alpha1().Jobs(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.BatchV1alpha1().Jobs(ns).Watch(ctx, o)
		},
	}
}

func commandListWatch(c versioned.Interface, ns string, names []string) cache.ListerWatcher {
	sel := nameSelector(names)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.BusV1alpha1().Commands(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.BusV1alpha1().Commands(ns).Watch(ctx, o)
		},
	}
}

// waitForOperation watches the jobs of namespace ns and the Commands
// written for them until every job got where op leads, writing a line of
// progress to errOut whenever a job's progress changes. A job the job
// controller will not move there (it took the Command in a phase it does
// not apply it in) ends the wait with an error at once; so does the
// timeout, naming the jobs that did not get there.
func waitForOperation(ctx context.Context, c versioned.Interface, ns string, op operation, jobs []watched, timeout time.Duration, errOut io.Writer) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, timeout)
	defer cancel()

	var jobNames, cmdNames []string
	for _, w := range jobs {
		jobNames = append(jobNames, w.name)
		cmdNames = append(cmdNames, w.command)
	}
	changed := make(chan struct{}, 1)
	notify := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke(changed) },
		UpdateFunc: func(any, any) { poke(changed) },
		DeleteFunc: func(any) { poke(changed) },
	}
	jobStore, jobCtl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: jobListWatch(c, ns, jobNames), ObjectType: &batchv1alpha1.Job{}, Handler: notify,
	})
	cmdStore, cmdCtl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: commandListWatch(c, ns, cmdNames), ObjectType: &busv1alpha1.Command{}, Handler: notify,
	})
	go jobCtl.RunWithContext(ctx)
	go cmdCtl.RunWithContext(ctx)
	go func() {
		// One look once both lists are in, even if they bring no event.
		if cache.WaitForCacheSync(ctx.Done(), jobCtl.HasSynced, cmdCtl.HasSynced) {
			poke(changed)
		}
	}()

	last := map[string]string{}
	finished := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return waitTimeout(ctx, op, jobs, finished, last, timeout)
		case <-changed:
		}
		if !jobCtl.HasSynced() || !cmdCtl.HasSynced() {
			// Judging before both lists arrived would take a Command not
			// yet seen for one the controller took.
			continue
		}
		all := true
		for _, w := range jobs {
			if finished[w.name] {
				continue
			}
			var j *batchv1alpha1.Job
			if obj, ok, _ := jobStore.GetByKey(ns + "/" + w.name); ok {
				j = obj.(*batchv1alpha1.Job)
			}
			_, pending, _ := cmdStore.GetByKey(ns + "/" + w.command)
			v, line := op.judge(w, j, pending)
			if v == refused {
				return util.UsageErrorf("%s", line)
			}
			if last[w.name] != line {
				last[w.name] = line
				fmt.Fprintf(errOut, "job/%s: %s\n", w.name, line)
			}
			if v == done {
				finished[w.name] = true
				continue
			}
			all = false
		}
		if all {
			return nil
		}
	}
}

// poke signals a change without blocking; one pending signal is enough.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func waitTimeout(ctx context.Context, op operation, jobs []watched, finished map[string]bool, last map[string]string, timeout time.Duration) error {
	if ctx.Err() != context.DeadlineExceeded {
		return ctx.Err()
	}
	var rest []string
	stuck := false
	for _, w := range jobs {
		if finished[w.name] {
			continue
		}
		now := last[w.name]
		if now == "" {
			now = "not seen"
		}
		if strings.Contains(now, "waiting for a job controller") {
			stuck = true
		}
		rest = append(rest, fmt.Sprintf("%s is %s", w.name, now))
	}
	sort.Strings(rest)
	hint := ""
	if stuck {
		hint = " (is Volcano's job controller running? 'kubectl vc serve' has none)"
	}
	return util.UsageErrorf("timed out after %s waiting for job(s) to be %s: %s%s", timeout, op.target, strings.Join(rest, "; "), hint)
}

// waitForDeletion watches until every named job of ns is gone.
func waitForDeletion(ctx context.Context, c versioned.Interface, ns string, names []string, timeout time.Duration) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, timeout)
	defer cancel()
	left := map[string]bool{}
	for _, n := range names {
		left[n] = true
	}
	_, err := watchtools.UntilWithSync(ctx, jobListWatch(c, ns, names), &batchv1alpha1.Job{},
		func(store cache.Store) (bool, error) {
			for n := range left {
				if _, exists, _ := store.GetByKey(ns + "/" + n); !exists {
					delete(left, n)
				}
			}
			return len(left) == 0, nil
		},
		func(ev watch.Event) (bool, error) {
			if j, ok := ev.Object.(*batchv1alpha1.Job); ok && ev.Type == watch.Deleted {
				delete(left, j.Name)
			}
			return len(left) == 0, nil
		})
	if err != nil && ctx.Err() != nil {
		var rest []string
		for n := range left {
			rest = append(rest, n)
		}
		sort.Strings(rest)
		return util.UsageErrorf("timed out after %s waiting for job(s) %s to be deleted (finalizers may hold them)", timeout, strings.Join(rest, ", "))
	}
	return err
}
