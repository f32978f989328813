package queue

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// refuseClosedParents refuses, before any Command is written, to open a
// queue whose parent holds it closed (Closed or Closing) or does not exist:
// the queue controller would leave its OpenQueue Command waiting until the
// parent opens, and a --wait would wait for nothing. A parent opened by the
// same call does not count, but what is above it does. The error names the
// queue that holds it closed and the one command that opens everything
// needed. A user who may not read a parent is left to the controller.
func refuseClosedParents(ctx context.Context, c versioned.Interface, queues []*schedulingv1beta1.Queue) error {
	opening := map[string]*schedulingv1beta1.Queue{}
	var names []string
	for _, q := range queues {
		opening[q.Name] = q
		names = append(names, q.Name)
	}
	read := map[string]*schedulingv1beta1.Queue{}
	get := func(name string) (*schedulingv1beta1.Queue, error) {
		if q, ok := opening[name]; ok {
			return q, nil
		}
		if q, ok := read[name]; ok {
			return q, nil
		}
		q, err := c.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		read[name] = q
		return q, nil
	}
	for _, q := range queues {
		// Up through the queues opened by this call, to the first one
		// that is not; every Closed or Closing queue met above that,
		// up to an Open one, has to be opened too.
		var closed []string
		seen := map[string]bool{q.Name: true}
		holder := ""
		p := rules.EffectiveParent(q)
		for p != "" && !seen[p] {
			seen[p] = true
			pq, err := get(p)
			switch {
			case apierrors.IsNotFound(err) && p == keys.RootQueue:
				// Nothing made root yet: the queue controller creates it
				// when it starts, before it applies any Command, and root
				// is never closed.
				p = ""
				continue
			case apierrors.IsNotFound(err):
				return util.UsageErrorf("cannot open queue %q: its parent %q does not exist: create it (kubectl vc queue create %s) or move the queue (kubectl vc queue update %s --parent NAME)",
					q.Name, p, p, q.Name)
			case apierrors.IsForbidden(err):
				p = ""
				continue
			case err != nil:
				return err
			}
			if _, ours := opening[p]; !ours {
				if !rules.HoldsChildrenClosed(pq.Status.State) {
					break
				}
				if holder == "" {
					holder = p
				}
				closed = append([]string{p}, closed...)
			}
			p = rules.EffectiveParent(pq)
		}
		if holder == "" || p == q.Name {
			// A queue in a parent cycle has no parent to hold it closed
			// (the controller opens it).
			continue
		}
		hq := read[holder]
		return util.UsageErrorf("cannot open queue %q: its parent %q is %s, and a queue cannot be open under a closed parent: open them together (kubectl vc queue open %s)",
			q.Name, holder, rules.StateOrOpen(hq.Status.State), strings.Join(append(closed, names...), " "))
	}
	return nil
}
