package job

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// jobWait is a wait on the named jobs of namespace ns.
func jobWait(c versioned.Interface, ns string, names []string, timeout time.Duration) wait.Spec {
	jobs := c.BatchV1alpha1().Jobs(ns)
	return wait.Spec{Kind: "job", Namespace: ns, Names: names, Timeout: timeout, ListWatch: wait.ListWatch(names, jobs.List, jobs.Watch)}
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
	spec := jobWait(c, ns, jobNames, timeout)
	commands := c.BusV1alpha1().Commands(ns)
	jobStore, jobCtl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: spec.ListWatch, ObjectType: &batchv1alpha1.Job{}, Handler: notify,
	})
	cmdStore, cmdCtl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: wait.ListWatch(cmdNames, commands.List, commands.Watch), ObjectType: &busv1alpha1.Command{}, Handler: notify,
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
			return waitTimeout(ctx, spec, op, jobs, finished, last)
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
			if obj, ok, _ := jobStore.GetByKey(spec.Key(w.name)); ok {
				j = obj.(*batchv1alpha1.Job)
			}
			_, pending, _ := cmdStore.GetByKey(spec.Key(w.command))
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

func waitTimeout(ctx context.Context, spec wait.Spec, op operation, jobs []watched, finished map[string]bool, last map[string]string) error {
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
	hint := ""
	if stuck {
		hint = " (is Volcano's job controller running? 'kubectl vc serve' has none)"
	}
	return wait.TimedOut(spec, op.target, rest, hint)
}

// waitForDeletion watches until every named job of ns is gone.
func waitForDeletion(ctx context.Context, c versioned.Interface, ns string, names []string, timeout time.Duration) error {
	return wait.Deleted[*batchv1alpha1.Job](ctx, jobWait(c, ns, names, timeout), "finalizers may hold them")
}
