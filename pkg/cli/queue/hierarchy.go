package queue

import (
	"context"
	"fmt"
	"sort"

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

// deletionOrder checks that deleting the named queues leaves no queue
// without its parent, and returns them in an order the API server accepts:
// every named queue after its named descendants (the admission policy refuses
// deleting a queue that still has a child), otherwise in the order given.
// A queue whose child is not named is refused here, before anything is
// written: with --close it would otherwise be closed and then not deleted.
func deletionOrder(named []*schedulingv1beta1.Queue, all map[string]*schedulingv1beta1.Queue) ([]*schedulingv1beta1.Queue, error) {
	deleting := make(map[string]bool, len(named))
	parentOf := make(map[string]string, len(named))
	for _, q := range named {
		deleting[q.Name] = true
		parentOf[q.Name] = q.Spec.Parent
	}
	children := map[string][]string{}
	for _, q := range all {
		if p := q.Spec.Parent; p != "" && p != q.Name {
			children[p] = append(children[p], q.Name)
		}
	}
	for _, q := range named {
		var kept []string
		for _, c := range children[q.Name] {
			if !deleting[c] {
				kept = append(kept, c)
			}
		}
		if len(kept) > 0 {
			sort.Strings(kept)
			more := ""
			if len(kept) > 1 {
				more = fmt.Sprintf(" (and %d more)", len(kept)-1)
			}
			return nil, util.UsageErrorf("cannot delete queue %q: it has child queue %q%s: delete it too or move it to another parent first (kubectl vc queue update %s --parent NAME)", q.Name, kept[0], more, kept[0])
		}
	}
	// Depth among the named queues: how many named queues sit below it on
	// its longest chain. A cycle (reported by the controller, refused by the
	// CLI) cannot make this loop: each walk stops at a queue seen before.
	below := make(map[string]int, len(named))
	for _, q := range named {
		seen := map[string]bool{q.Name: true}
		d := 0
		for p := parentOf[q.Name]; deleting[p] && !seen[p]; p = parentOf[p] {
			seen[p] = true
			d++
			if below[p] < d {
				below[p] = d
			}
		}
	}
	out := append([]*schedulingv1beta1.Queue(nil), named...)
	sort.SliceStable(out, func(i, j int) bool { return below[out[i].Name] < below[out[j].Name] })
	return out, nil
}
