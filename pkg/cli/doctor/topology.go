package doctor

import (
	"context"
	"fmt"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/topology"
)

// topologyPlugin is the scheduler plugin that enforces hard network
// topology constraints.
const topologyPlugin = "network-topology-aware"

// checkTopology, where HyperNodes exist: the defects of their tree (two
// parents or a cycle make Volcano's scheduler skip every job with a
// network-topology constraint: FAIL; a member that matches nothing or a
// tier not above its member's: WARN), and that the scheduler's
// configuration enables the network-topology-aware plugin, without which
// hard mode is not enforced (WARN).
func (o *Options) checkTopology(ctx context.Context) {
	r := &topology.Reader{VC: o.vc, Kube: o.kube}
	w, err := r.Read(ctx)
	if err != nil {
		o.cannot("topology", "the HyperNodes", err)
		return
	}
	if !w.Served || (len(w.HyperNodes) == 0 && len(w.Unreadable) == 0) {
		return // no network topology: nothing to check
	}
	for _, u := range w.Unreadable {
		o.add("topology", Warn, "cannot check everything: "+u, "")
	}
	if len(w.HyperNodes) == 0 {
		return
	}
	for _, d := range w.Tree.Defects {
		st := Warn
		if d.Fatal {
			st = Fail
		}
		o.add("topology", st, fmt.Sprintf("%s: %s", d.Kind, d.Message), "fix the HyperNode's members ('kubectl vc hypernode tree' shows the tree)", d.HyperNode)
	}
	if len(w.Tree.Defects) == 0 {
		o.add("topology", OK, fmt.Sprintf("%d HyperNode(s) form a tree (tiers %v), %d node(s) in no HyperNode", len(w.HyperNodes), w.Tree.Tiers(), len(w.Tree.Unplaced)), "")
	}
	conf, err := o.Line.ReadConfig(ctx, o.kube)
	if err != nil {
		o.add("topology", Warn, "cannot read the scheduler's configuration: "+err.Error(), "")
		return
	}
	if conf.Plugin(topologyPlugin) == nil {
		o.add("topology", Warn, fmt.Sprintf("HyperNodes exist, but the scheduler's configuration (%s) has no %s plugin: hard network-topology constraints are not enforced, such jobs are placed anywhere", conf.Source, topologyPlugin),
			"add '- name: "+topologyPlugin+"' to a tier of the scheduler's configuration (volcano-scheduler.conf)")
		return
	}
	o.add("topology", OK, fmt.Sprintf("the scheduler's configuration (%s) enables the %s plugin", conf.Source, topologyPlugin), "")
}
