package queue

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// flagName names a queue's resource lists by the flags that set them.
func flagName(list string) string { return "--" + list }

// checkResources enforces, per resource, guarantee <= deserved <=
// capability (rules.CheckQueueResources), the rule the admission policy
// also enforces, so the user learns it before a write.
func checkResources(spec *schedulingv1beta1.QueueSpec) error {
	if err := rules.CheckQueueResources(spec, flagName); err != nil {
		return util.UsageErrorf("%s", err)
	}
	return nil
}

// allQueues reads every queue with one request, by name.
func allQueues(ctx context.Context, c versioned.Interface) (map[string]*schedulingv1beta1.Queue, error) {
	list, err := c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*schedulingv1beta1.Queue, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// parentCheck says how much of a queue's new place checkPlacement checks.
type parentCheck int

const (
	// keepParent: the parent does not change; only resources are checked.
	keepParent parentCheck = iota
	// newParent: the parent must exist and may not be below the queue.
	newParent
	// newParentChain: as newParent, and every queue above the parent must
	// exist too, except root, which is taken to exist.
	newParentChain
)

// checkPlacement checks a queue, as it is to be written, against the other
// queues: with a new parent, that it exists and is not below the queue
// (which would make a cycle); always, the resource rules that need other
// queues (rules.CheckQueueInHierarchy). These are the rules an admission
// policy cannot fully see: it looks at one other queue at a time.
func checkPlacement(q *schedulingv1beta1.Queue, all map[string]*schedulingv1beta1.Queue, check parentCheck) error {
	if check != keepParent {
		others := make(map[string]*schedulingv1beta1.Queue, len(all)+1)
		for n, o := range all {
			others[n] = o
		}
		others[q.Name] = q
		a, err := rules.WalkUp(q.Name, rules.MapLookup(others))
		if err != nil {
			return err
		}
		parent := rules.EffectiveParent(q)
		switch {
		case a.InCycle():
			return util.UsageErrorf("invalid --parent %q: it is below %q, which would make a cycle (%s)", parent, q.Name, rules.FormatCycle(a.Cycle()))
		case a.Missing != "" && check == newParentChain && a.Missing != keys.RootQueue,
			a.Missing != "" && check == newParent && a.Missing == parent:
			return util.UsageErrorf("parent queue %q not found: create it first or pick another --parent", a.Missing)
		}
	}
	if err := rules.CheckQueueInHierarchy(q, all, flagName); err != nil {
		return util.UsageErrorf("%s", err)
	}
	return nil
}
