package job

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// jobWait is a wait on the named jobs of namespace ns; on timeout it adds
// the last Warning a controller recorded on each job left since the wait
// began (kc nil: none).
func jobWait(c versioned.Interface, kc kubernetes.Interface, ns string, names []string, timeout time.Duration) wait.Spec {
	since := time.Now().Add(-time.Second)
	s := wait.SpecOf(Kind, c, ns, names, timeout)
	if kc != nil {
		s.Explain = func(ctx context.Context, name string) string {
			evs, err := vcprinters.LatestWarnings(ctx, kc, vcprinters.EventQuery{
				APIVersion: batchv1alpha1.SchemeGroupVersion.String(), Kind: "Job", Namespace: ns, Name: name})
			if err != nil {
				return ""
			}
			var last *corev1.Event
			for _, e := range evs {
				if t := vcprinters.LastSeen(&e); !t.Before(since) && (last == nil || vcprinters.LastSeen(last).Before(t)) {
					last = e.DeepCopy()
				}
			}
			if last == nil {
				return ""
			}
			return fmt.Sprintf("the controller reported %s: %s", last.Reason, last.Message)
		}
	}
	return s
}

// kubeClient is f's client of the core API groups for events, nil when
// there is none: a timeout then says less, never nothing.
func kubeClient(f util.Factory) kubernetes.Interface {
	if f == nil {
		return nil
	}
	kc, err := f.KubeClient()
	if err != nil {
		return nil
	}
	return kc
}

// waitForOperation watches the jobs of namespace ns and the Commands
// written for them until every job got where op leads, writing a line of
// progress to errOut whenever a job's progress changes. A job the job
// controller will not move there (it took the Command in a phase it does
// not apply it in) ends the wait with an error at once; so does the
// timeout, naming the jobs that did not get there.
func waitForOperation(parent context.Context, c versioned.Interface, kc kubernetes.Interface, ns string, op operation, jobs []watched, timeout time.Duration, errOut io.Writer) error {
	ctx, cancel := watchtools.ContextWithOptionalTimeout(parent, timeout)
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
	spec := jobWait(c, kc, ns, jobNames, timeout)
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
			return waitTimeout(parent, ctx, spec, op, jobs, finished, last)
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

func waitTimeout(parent, ctx context.Context, spec wait.Spec, op operation, jobs []watched, finished map[string]bool, last map[string]string) error {
	if ctx.Err() != context.DeadlineExceeded {
		return ctx.Err()
	}
	var rest []string
	stuck, explained := false, false
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
		line, ok := spec.Explained(parent, w.name, fmt.Sprintf("%s is %s", w.name, now))
		explained = explained || ok
		rest = append(rest, line)
	}
	hint := ""
	if stuck && !explained {
		hint = " (is Volcano's job controller running? 'kubectl vc serve' has none)"
	}
	return wait.TimedOut(spec, op.target, rest, hint)
}
