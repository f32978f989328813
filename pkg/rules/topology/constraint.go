package topology

import (
	"fmt"
	"sort"
	"strings"
)

// Constraint is one network-topology constraint as written: on a PodGroup
// (spec.networkTopology, which serve's and Volcano's podgroup controllers
// fill from the pod annotations volcano.sh/network-topology-mode and
// volcano.sh/network-topology-highest-tier), on a Volcano Job, or on one
// of its tasks' partitions.
type Constraint struct {
	// Where names the field it was read from.
	Where string
	// Mode is "hard" or "soft"; empty is hard, the CRD's default.
	Mode     string
	Tier     *int
	TierName string
}

// Resolution is what Volcano's scheduler makes of a constraint
// (Session.adjustNetworkTopologySpec and JobInfo.IsHardTopologyMode):
// a hard constraint with a tier, given or found by its name, is
// enforced; a soft one is a preference; anything else is ignored.
type Resolution struct {
	Enforced bool
	Soft     bool
	// Tier is the highest tier allowed when Enforced.
	Tier int
	// Words say how it was resolved, or why it is not enforced.
	Words string
}

// Resolve resolves c against the tree's tier names.
func (t *Tree) Resolve(c Constraint) Resolution {
	if strings.EqualFold(c.Mode, "soft") {
		return Resolution{Soft: true, Words: fmt.Sprintf("soft mode (%s): the scheduler tries the HyperNodes lowest tier first and, when none has room, the whole cluster (it turns soft into hard at its virtual top tier %d): a preference, never a wait", c.Where, t.TopTier())}
	}
	switch {
	case c.Tier != nil:
		w := fmt.Sprintf("hard, highest tier %d (%s)", *c.Tier, c.Where)
		if c.TierName != "" {
			w += fmt.Sprintf("; highestTierName %q is not read when highestTierAllowed is set", c.TierName)
		}
		return Resolution{Enforced: true, Tier: *c.Tier, Words: w}
	case c.TierName != "":
		names := t.TierNames()
		if tier, ok := names[c.TierName]; ok {
			return Resolution{Enforced: true, Tier: tier, Words: fmt.Sprintf("hard, highest tier %q = tier %d (%s)", c.TierName, tier, c.Where)}
		}
		known := make([]string, 0, len(names))
		for n, tier := range names {
			known = append(known, fmt.Sprintf("%s=%d", n, tier))
		}
		sort.Strings(known)
		have := "no HyperNode has a tierName"
		if len(known) > 0 {
			have = "tier names: " + strings.Join(known, ", ")
		}
		return Resolution{Words: fmt.Sprintf("highestTierName %q (%s) matches no HyperNode's tierName (%s): the scheduler logs 'Failed to translate highestTierName' every cycle and places the group as if it had no constraint", c.TierName, c.Where, have)}
	}
	return Resolution{Words: fmt.Sprintf("hard mode with neither highestTierAllowed nor highestTierName (%s): the scheduler places the group as if it had no constraint", c.Where)}
}

// TopTier is the tier of the scheduler's virtual HyperNode over the whole
// cluster: one above the highest tier, 1 without HyperNodes.
func (t *Tree) TopTier() int {
	top := 1
	for _, h := range t.HyperNodes {
		if h.Tier >= top {
			top = h.Tier + 1
		}
	}
	return top
}

// Candidates are the HyperNodes a hard constraint of highest tier tier
// may place a group in, lowest tier first as the scheduler tries them;
// when tier reaches the virtual top tier, the whole cluster is the last
// candidate (all true).
func (t *Tree) Candidates(tier int) (hns []*HyperNode, all bool) {
	for _, h := range t.HyperNodes {
		if h.Tier <= tier {
			hns = append(hns, h)
		}
	}
	sort.SliceStable(hns, func(i, j int) bool { return hns[i].Tier < hns[j].Tier })
	return hns, tier >= t.TopTier()
}
