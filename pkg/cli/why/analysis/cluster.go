package analysis

// Could the cluster hold it at all? The group's minResources against what
// the Ready, schedulable nodes offer together.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// checkCluster: the group's minResources must fit what the Ready,
// schedulable nodes offer together.
func (a *analyzer) checkCluster(pg *schedulingv1beta1.PodGroup) {
	for _, u := range a.s.Unreadable {
		if u.What == "nodes" {
			// Not read is not none: NotChecked says so, nothing is guessed.
			return
		}
	}
	total := corev1.ResourceList{}
	ready := 0
	for i := range a.s.Nodes {
		n := &a.s.Nodes[i]
		if n.Spec.Unschedulable || !nodeReady(n) {
			continue
		}
		ready++
		rules.AddTo(total, n.Status.Allocatable)
	}
	if ready == 0 {
		a.block(NoReadyNodes, a.objectRef(), fmt.Sprintf("no node is Ready and schedulable (%d node(s) in all): nothing can be placed", len(a.s.Nodes)),
			"add nodes, or uncordon them (kubectl uncordon NODE)", fmt.Sprintf("%d node(s), none Ready and schedulable", len(a.s.Nodes)))
		return
	}
	if pg.Spec.MinResources == nil {
		a.ok("cluster", "%d Ready node(s) offer %s", ready, listString(total))
		return
	}
	var over []ResourceUse
	for _, r := range rules.SortedNames(*pg.Spec.MinResources) {
		m := (*pg.Spec.MinResources)[r]
		t := total[r]
		if m.Cmp(t) > 0 {
			over = append(over, ResourceUse{Resource: string(r), Needed: m.String(), Limit: t.String()})
		}
	}
	if len(over) == 0 {
		a.ok("cluster", "minResources %s fits the %s that %d Ready node(s) offer", listString(*pg.Spec.MinResources), listString(total), ready)
		return
	}
	r := a.block(MinResourcesOverCluster, groupRef(pg),
		fmt.Sprintf("the group's minResources is more than all %d Ready node(s) offer together (%s): it can never run", ready, arith(over, false)),
		"lower what the group asks (its pods' requests or minMember), or add nodes with these resources",
		fmt.Sprintf("%s spec.minResources %s", groupRef(pg), listString(*pg.Spec.MinResources)),
		fmt.Sprintf("allocatable of %d Ready, schedulable node(s): %s", ready, listString(total)))
	r.Resources = over
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
