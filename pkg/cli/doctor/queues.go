package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// checkQueues reports queues in state Unknown, queues whose place in the
// hierarchy is broken, and Closing queues with what holds them: a Closing
// queue becomes Closed once no podgroup is left in it.
func (o *Options) checkQueues(ctx context.Context) {
	var queues []schedulingv1beta1.Queue
	err := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return o.vc.SchedulingV1beta1().Queues().List(ctx, opts)
	}).EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		queues = append(queues, *obj.(*schedulingv1beta1.Queue))
		return nil
	})
	if err != nil {
		o.cannot("queues", "queues", err)
		return
	}
	sort.Slice(queues, func(i, j int) bool { return queues[i].Name < queues[j].Name })
	var unknown, closing []string
	problems := 0
	for _, q := range queues {
		switch q.Status.State {
		case schedulingv1beta1.QueueStateUnknown:
			unknown = append(unknown, q.Name)
		case schedulingv1beta1.QueueStateClosing:
			closing = append(closing, q.Name)
		}
		if p := q.Annotations[rules.HierarchyProblemAnnotation]; p != "" {
			problems++
			o.add("queues", Warn, fmt.Sprintf("queue %s has a broken place in the hierarchy: %s", q.Name, p),
				fmt.Sprintf("set its parent to an existing queue outside any cycle, e.g. root: 'kubectl vc queue update %s --parent root'", q.Name), q.Name)
		}
	}
	if len(unknown) > 0 {
		o.add("queues", Warn, fmt.Sprintf("%d queue(s) in state Unknown: %s", len(unknown), some(unknown, 5)),
			fmt.Sprintf("see each one's events and podgroups ('kubectl vc queue describe %s'), then open or close it again ('kubectl vc queue open %s')", unknown[0], openCommandArgs(unknown[0], queues)), unknown...)
	}
	if len(closing) > 0 {
		holders, err := o.podGroupsByQueue(ctx)
		if err != nil {
			o.cannot("queues", "what holds the Closing queues (podgroups)", err)
		}
		for _, name := range closing {
			if err != nil {
				break
			}
			held := holders[name]
			if len(held) == 0 {
				o.add("queues", Warn, fmt.Sprintf("queue %s is Closing but holds no podgroup: no queue controller has synced it since", name),
					"see the controllers line: a running queue controller makes it Closed", name)
				continue
			}
			o.add("queues", Warn, fmt.Sprintf("queue %s is Closing, held by %d podgroup(s): %s", name, len(held), some(held, 3)),
				"it becomes Closed when they finish and are deleted; delete them (or their jobs) to close it now, or reopen it: 'kubectl vc queue open "+openCommandArgs(name, queues)+"'", held...)
		}
	}
	if len(unknown) == 0 && len(closing) == 0 && problems == 0 {
		o.add("queues", OK, fmt.Sprintf("%d queue(s), none Unknown, Closing or misplaced in the hierarchy", len(queues)), "")
	}
}

// podGroupsByQueue lists every podgroup once and groups them by queue, as
// "namespace/name (phase)".
func (o *Options) podGroupsByQueue(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	err := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return o.vc.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List(ctx, opts)
	}).EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		pg := obj.(*schedulingv1beta1.PodGroup)
		phase := string(pg.Status.Phase)
		if phase == "" {
			phase = "no phase"
		}
		queue := rules.QueueOf(pg.Spec.Queue)
		out[queue] = append(out[queue], fmt.Sprintf("%s/%s (%s)", pg.Namespace, pg.Name, phase))
		return nil
	})
	return out, err
}

// openCommandArgs are the queues 'kubectl vc queue open' must be given to
// open name: a queue cannot be opened under a Closed or Closing parent, so
// every such queue above it comes first, top down ("team-a dev").
func openCommandArgs(name string, queues []schedulingv1beta1.Queue) string {
	byName := map[string]*schedulingv1beta1.Queue{}
	for i := range queues {
		byName[queues[i].Name] = &queues[i]
	}
	args := []string{name}
	seen := map[string]bool{name: true}
	q := byName[name]
	for q != nil {
		p := rules.EffectiveParent(q)
		pq := byName[p]
		if p == "" || seen[p] || pq == nil || !rules.HoldsChildrenClosed(pq.Status.State) {
			break
		}
		seen[p] = true
		args = append([]string{p}, args...)
		q = pq
	}
	return strings.Join(args, " ")
}
