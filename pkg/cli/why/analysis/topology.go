package analysis

// Does a network-topology constraint hold it? The constraint resolved as
// Volcano's scheduler resolves it (pkg/rules/topology), the HyperNodes it
// may use against what the group needs, the defects that make the
// scheduler skip every topology job, and where a running group was placed.

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/topology"
)

// The topology reasons (docs/why.md, docs/topology.md).
const (
	// TopologyTreeBroken: a HyperNode has two parents, or HyperNodes form a
	// cycle: the scheduler schedules no job with a network-topology
	// constraint (hard or soft) until it is fixed.
	TopologyTreeBroken Code = "TopologyTreeBroken"
	// TopologyNoFit: no HyperNode within the allowed tier has the idle
	// resources the group (or a task's partition) needs.
	TopologyNoFit Code = "TopologyNoFit"
	// TopologyIgnored: (note) the constraint is one the scheduler drops: a
	// highestTierName no HyperNode has, or hard mode without a tier.
	TopologyIgnored Code = "TopologyIgnored"
	// TopologyNotEnforced: (note) the scheduler's configuration has no
	// network-topology-aware plugin: hard mode is not enforced.
	TopologyNotEnforced Code = "TopologyNotEnforced"
	// TopologySoft: (note) soft mode: a preference, never a wait.
	TopologySoft Code = "TopologySoft"
	// TopologyPlacement: (note) the HyperNode a running group's pods are in.
	TopologyPlacement Code = "TopologyPlacement"
	// HeldByInqueueGroups: the overcommit plugin refuses to enqueue the
	// group: the minResources of the Inqueue groups plus its own are over
	// what the cluster admits, often because an Inqueue group can never
	// run (a topology constraint no HyperNode fits) and keeps its share.
	HeldByInqueueGroups Code = "HeldByInqueueGroups"
)

// topologyPlugin is the plugin that enforces hard mode.
const topologyPlugin = "network-topology-aware"

// need is one constraint with what it must fit in one HyperNode.
type need struct {
	c    topology.Constraint
	res  corev1.ResourceList
	what string
}

// checkTopology checks the constraints of the object's group or job.
func (a *analyzer) checkTopology(pg *schedulingv1beta1.PodGroup, waiting bool) {
	needs := a.constraints(pg)
	if len(needs) == 0 && !(a.s.HyperNodesRead && len(a.s.HyperNodes) > 0 && !waiting) {
		return
	}
	tree := topology.Build(a.s.HyperNodes, a.s.Nodes, a.s.NodesRead)
	usage := topology.NewUsage(a.s.Nodes, a.s.AllPods, a.s.AllPodsRead)
	if !waiting {
		// A running group: what its constraint amounted to, and where it
		// was placed.
		for _, n := range needs {
			a.resolveConstraint(tree, n)
		}
		a.placement(tree, needs)
		return
	}
	if len(needs) == 0 {
		return
	}
	if !a.s.HyperNodesRead {
		a.note(NotChecked, a.objectRef(), "the HyperNodes could not be read: whether the network-topology constraint can be met is not checked", "ask for read access to hypernodes.topology.volcano.sh")
		return
	}
	if fatal := tree.Fatal(); len(fatal) > 0 {
		var ev []string
		for _, d := range fatal {
			ev = append(ev, d.Message)
		}
		a.block(TopologyTreeBroken, a.objectRef(),
			fmt.Sprintf("the HyperNode tree is broken (%d defect(s)): Volcano's scheduler skips every job with a network-topology constraint, hard or soft, until it is fixed", len(fatal)),
			"give every HyperNode one parent and break the cycle (kubectl vc hypernode tree shows where)", ev...)
		return
	}
	for _, n := range needs {
		a.checkConstraint(tree, usage, n)
	}
}

// constraints are the object's network-topology constraints: a Job's own
// and its tasks' partitions, else the group's (spec.networkTopology, which
// the podgroup controllers fill from the pod annotations, and its
// subGroupPolicy).
func (a *analyzer) constraints(pg *schedulingv1beta1.PodGroup) []need {
	var out []need
	groupNeed := a.groupNeed(pg)
	if j := a.s.Job; a.s.Kind == Job && j != nil {
		if nt := j.Spec.NetworkTopology; nt != nil {
			out = append(out, need{c: topology.Constraint{Where: "job spec.networkTopology", Mode: string(nt.Mode), Tier: nt.HighestTierAllowed, TierName: nt.HighestTierName}, res: groupNeed, what: "the job's minimum"})
		}
		for _, t := range j.Spec.Tasks {
			pp := t.PartitionPolicy
			if pp == nil || pp.NetworkTopology == nil {
				continue
			}
			nt := pp.NetworkTopology
			out = append(out, need{c: topology.Constraint{Where: "task " + t.Name + " partitionPolicy.networkTopology", Mode: string(nt.Mode), Tier: nt.HighestTierAllowed, TierName: nt.HighestTierName},
				res: partitionNeed(t), what: fmt.Sprintf("one partition of task %s (%d pod(s))", t.Name, pp.PartitionSize)})
		}
		return out
	}
	if pg == nil {
		return nil
	}
	if nt := pg.Spec.NetworkTopology; nt != nil {
		where := "podgroup spec.networkTopology"
		if a.fromAnnotations() {
			where += " (from the pods' volcano.sh/network-topology-* annotations)"
		}
		out = append(out, need{c: topology.Constraint{Where: where, Mode: string(nt.Mode), Tier: nt.HighestTierAllowed, TierName: nt.HighestTierName}, res: groupNeed, what: "the group's minimum"})
	}
	for _, sg := range pg.Spec.SubGroupPolicy {
		if nt := sg.NetworkTopology; nt != nil {
			out = append(out, need{c: topology.Constraint{Where: "podgroup subGroupPolicy " + sg.Name + " networkTopology", Mode: string(nt.Mode), Tier: nt.HighestTierAllowed, TierName: nt.HighestTierName}, what: "subgroup " + sg.Name})
		}
	}
	return out
}

// fromAnnotations tells whether the group's pods carry the topology
// annotations.
func (a *analyzer) fromAnnotations() bool {
	for i := range a.s.Pods {
		an := a.s.Pods[i].Annotations
		if an["volcano.sh/network-topology-mode"] != "" || an["volcano.sh/network-topology-highest-tier"] != "" {
			return true
		}
	}
	return false
}

// groupNeed is what the group needs at once: its minResources, else the
// requests of its first minMember pods.
func (a *analyzer) groupNeed(pg *schedulingv1beta1.PodGroup) corev1.ResourceList {
	if pg != nil && pg.Spec.MinResources != nil {
		return *pg.Spec.MinResources
	}
	sum := corev1.ResourceList{}
	n := int32(len(a.s.Pods))
	if pg != nil && pg.Spec.MinMember > 0 && pg.Spec.MinMember < n {
		n = pg.Spec.MinMember
	}
	for i := int32(0); i < n; i++ {
		rules.AddTo(sum, rules.PodRequests(&a.s.Pods[i]))
	}
	return sum
}

// partitionNeed is what one partition of a task needs.
func partitionNeed(t batchv1alpha1.TaskSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: t.Template.Spec}
	one := rules.PodRequests(pod)
	sum := corev1.ResourceList{}
	for i := int32(0); i < t.PartitionPolicy.PartitionSize; i++ {
		rules.AddTo(sum, one)
	}
	return sum
}

// resolveConstraint resolves one constraint as the scheduler does and
// notes what makes it no constraint at all (soft, ignored, not
// enforced); it returns the resolution and whether the constraint holds
// the group to a tier.
func (a *analyzer) resolveConstraint(tree *topology.Tree, n need) (topology.Resolution, bool) {
	r := tree.Resolve(n.c)
	obj := a.objectRef()
	switch {
	case r.Soft:
		a.note(TopologySoft, obj, r.Words, "")
		return r, false
	case !r.Enforced:
		a.note(TopologyIgnored, obj, "the network-topology constraint is ignored: "+r.Words,
			"name a tier that exists (kubectl vc hypernode list shows TIER and TIERNAME), or drop the constraint")
		return r, false
	}
	if conf := a.s.SchedulerConfig; conf != nil && conf.Plugin(topologyPlugin) == nil {
		a.note(TopologyNotEnforced, obj,
			fmt.Sprintf("the constraint (%s) is not enforced: the scheduler's configuration (%s) has no %s plugin, so hard mode places the group anywhere", r.Words, conf.Source, topologyPlugin),
			"add the "+topologyPlugin+" plugin to a tier of the scheduler's configuration")
		return r, false
	}
	return r, true
}

// checkConstraint resolves one constraint and, when enforced, checks the
// HyperNodes it may use.
func (a *analyzer) checkConstraint(tree *topology.Tree, usage *topology.Usage, n need) {
	r, holds := a.resolveConstraint(tree, n)
	if !holds {
		return
	}
	obj := a.objectRef()
	cands, all := tree.Candidates(r.Tier)
	if !a.s.NodesRead || !a.s.AllPodsRead {
		a.note(NotChecked, obj, fmt.Sprintf("%s: the idle resources under the HyperNodes are not known (nodes or the pods of every namespace could not be read)", r.Words), "ask for read access to nodes and pods")
		return
	}
	need := topology.Schedulable(n.res)
	if len(need) == 0 {
		a.ok("topology", "%s: %s requests nothing to check against the HyperNodes", r.Words, n.what)
		return
	}
	var ev []string
	for _, h := range cands {
		_, idle := usage.Of(h.Nodes)
		if short := topology.Short(need, idle); len(short) == 0 {
			a.ok("topology", "%s: HyperNode %s (tier %d) has idle %s, enough for %s (%s)", r.Words, h.Name, h.Tier, listString(idle), n.what, listString(need))
			return
		} else {
			ev = append(ev, fmt.Sprintf("HyperNode %s (tier %d, nodes %s): idle %s", h.Name, h.Tier, orNone(strings.Join(h.Nodes, ",")), strings.Join(short, ", ")))
		}
	}
	if all {
		var nodes []string
		for i := range a.s.Nodes {
			nodes = append(nodes, a.s.Nodes[i].Name)
		}
		_, idle := usage.Of(nodes)
		if short := topology.Short(need, idle); len(short) == 0 {
			a.ok("topology", "%s: tier %d reaches the scheduler's virtual top over the whole cluster, whose idle %s is enough for %s", r.Words, r.Tier, listString(idle), n.what)
			return
		} else {
			ev = append(ev, fmt.Sprintf("the whole cluster (virtual top, tier %d): idle %s", tree.TopTier(), strings.Join(short, ", ")))
		}
	}
	msg := fmt.Sprintf("no HyperNode of tier %d or lower has the idle resources for %s (%s): the scheduler keeps it waiting", r.Tier, n.what, listString(need))
	if len(ev) == 0 {
		tiers := tree.Tiers()
		ts := make([]string, len(tiers))
		for i, t := range tiers {
			ts[i] = fmt.Sprint(t)
		}
		msg = fmt.Sprintf("no HyperNode has tier %d or lower (tiers in use: %s): the scheduler finds nowhere to place it and keeps it waiting", r.Tier, orNone(strings.Join(ts, ", ")))
	}
	a.block(TopologyNoFit, obj, msg+" ("+r.Words+")",
		"raise the highest tier allowed, free resources under one HyperNode, or lower what it asks", ev...)
}

// placement says where a running group's pods are: the lowest HyperNode
// holding all their nodes, against its constraint's tier.
func (a *analyzer) placement(tree *topology.Tree, needs []need) {
	set := map[string]bool{}
	for i := range a.s.Pods {
		p := &a.s.Pods[i]
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			set[p.Spec.NodeName] = true
		}
	}
	if len(set) == 0 {
		return
	}
	nodes := make([]string, 0, len(set))
	for n := range set {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	at := tree.Placement(nodes)
	where := fmt.Sprintf("its pods are on %s: no HyperNode holds them all (the scheduler's virtual top, tier %d)", strings.Join(nodes, ", "), tree.TopTier())
	tier := tree.TopTier()
	if at != nil {
		where = fmt.Sprintf("its pods are on %s, inside HyperNode %s (tier %d), the lowest holding them all", strings.Join(nodes, ", "), at.Name, at.Tier)
		tier = at.Tier
	}
	for _, n := range needs {
		if r := tree.Resolve(n.c); r.Enforced && tier > r.Tier {
			where += fmt.Sprintf("; that is above the highest tier %d its constraint allows (%s)", r.Tier, n.c.Where)
		}
	}
	a.note(TopologyPlacement, a.objectRef(), "placed: "+where, "")
}

// checkHeldByInqueue: a Pending group is enqueued by the overcommit
// plugin only while the minResources of the Inqueue groups plus its own
// fit the factor (1.2 unless configured) times the allocatable of the
// Ready nodes, less what their pods request (overcommit.go's
// JobEnqueueableFn). An Inqueue group that cannot run keeps its share
// for ever: one whose topology constraint no HyperNode fits is named.
func (a *analyzer) checkHeldByInqueue(pg *schedulingv1beta1.PodGroup, tree *topology.Tree) {
	s := a.s
	if pg == nil || pg.Spec.MinResources == nil || pgPhase(pg) != string(schedulingv1beta1.PodGroupPending) || !s.NodesRead || !s.AllPodsRead {
		return
	}
	factor := 1.2
	if conf := s.SchedulerConfig; conf != nil {
		p := conf.Plugin("overcommit")
		if p == nil || !conf.HasAction("enqueue") {
			return
		}
		if f, err := parseFactor(p.OvercommitFactor); err == nil && f >= 1 {
			factor = f
		}
	}
	var ready []string
	for i := range s.Nodes {
		if nodeReady(&s.Nodes[i]) {
			ready = append(ready, s.Nodes[i].Name)
		}
	}
	usage := topology.NewUsage(s.Nodes, s.AllPods, true)
	alloc, _ := usage.Of(ready)
	used := usage.Used(ready)
	inq := corev1.ResourceList{}
	var holders []string
	for i := range s.PodGroups {
		g := &s.PodGroups[i]
		if g.Status.Phase != schedulingv1beta1.PodGroupInqueue || g.Spec.MinResources == nil || (g.Namespace == pg.Namespace && g.Name == pg.Name) {
			continue
		}
		rules.AddTo(inq, *g.Spec.MinResources)
		h := fmt.Sprintf("%s Inqueue holds %s", groupRef(g), listString(*g.Spec.MinResources))
		if why := a.neverFits(tree, usage, g); why != "" {
			h += ", and " + why
		}
		holders = append(holders, h)
	}
	var over []ResourceUse
	var parts []string
	min := topology.Schedulable(*pg.Spec.MinResources)
	for _, r := range rules.SortedNames(min) {
		need := min[r]
		al := alloc[r]
		limit := al.AsApproximateFloat64()*factor - quantityFloat(used[r])
		iq := inq[r]
		if quantityFloat(iq)+need.AsApproximateFloat64() > limit+1e-9 {
			lim := fmt.Sprintf("%.6g", limit)
			over = append(over, ResourceUse{Resource: string(r), Needed: need.String(), Inqueue: iq.String(), Limit: lim})
			parts = append(parts, fmt.Sprintf("%s %s Inqueue + %s needed > %s (%.3g × %s allocatable - %s requested)", r, iq.String(), need.String(), lim, factor, al.String(), qString(used[r])))
		}
	}
	if len(over) == 0 || len(holders) == 0 {
		return
	}
	sort.Strings(holders)
	rr := a.block(HeldByInqueueGroups, groupRef(pg),
		"the scheduler does not enqueue it: its overcommit plugin admits a group only while the minResources of the Inqueue groups plus its own fit the cluster's headroom ("+strings.Join(parts, "; ")+"), and Inqueue groups hold it; a group created before them would have been admitted",
		"delete or fix the Inqueue group(s) that cannot run (their network topology, their requests), or free resources", holders...)
	rr.Resources = over
}

// neverFits says why an Inqueue group can never run, "" when nothing
// says so: its hard constraint fits no HyperNode, or its tier is below
// every HyperNode's.
func (a *analyzer) neverFits(tree *topology.Tree, usage *topology.Usage, g *schedulingv1beta1.PodGroup) string {
	nt := g.Spec.NetworkTopology
	if nt == nil {
		return ""
	}
	if len(tree.Fatal()) > 0 {
		return "its network topology waits on a broken HyperNode tree"
	}
	r := tree.Resolve(topology.Constraint{Where: "spec.networkTopology", Mode: string(nt.Mode), Tier: nt.HighestTierAllowed, TierName: nt.HighestTierName})
	if !r.Enforced {
		return ""
	}
	if conf := a.s.SchedulerConfig; conf != nil && conf.Plugin(topologyPlugin) == nil {
		return ""
	}
	cands, all := tree.Candidates(r.Tier)
	if all {
		return ""
	}
	need := topology.Schedulable(*g.Spec.MinResources)
	for _, h := range cands {
		alloc, _ := usage.Of(h.Nodes)
		if len(topology.Short(need, alloc)) == 0 {
			return "" // it may fit once resources are freed
		}
	}
	if len(cands) == 0 {
		return fmt.Sprintf("its network topology (hard, highest tier %d) fits no HyperNode (none has that tier or lower): it never runs and keeps holding it", r.Tier)
	}
	return fmt.Sprintf("its network topology (hard, highest tier %d) fits no HyperNode (none of tier %d or lower has %s allocatable): it never runs and keeps holding it", r.Tier, r.Tier, listString(need))
}

func parseFactor(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return f, err
}

func quantityFloat(q resource.Quantity) float64 { return q.AsApproximateFloat64() }

func qString(q resource.Quantity) string { return q.String() }
