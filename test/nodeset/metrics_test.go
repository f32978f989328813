package nodeset

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metric returns the series of one metric family as "labels=value" lines,
// sorted, restricted to the test's namespace where the metric has one.
func metric(t *testing.T, reg *prometheus.Registry, ns, name string) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			skip := false
			for _, l := range m.GetLabel() {
				if l.GetName() == "namespace" {
					skip = l.GetValue() != ns
					continue
				}
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			if skip {
				continue
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out = append(out, fmt.Sprintf("%s=%g", strings.Join(labels, ","), v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestMetrics: the controller exports, per NodeSet, its replicas by status
// and by the state of their Slurm nodes (volcano_nodeset_*), and counts
// syncs and pods created; a deleted NodeSet's series go.
func TestMetrics(t *testing.T) {
	e := startWithoutController(t, "met", 2)
	reg := prometheus.NewRegistry()
	e.runControllerWith(controllerOptions{metrics: reg})
	e.NewNodeSet("met", 2)
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })
	if _, err := e.Slurm.Allocate(e.Ctx, "met-1", 30); err != nil {
		t.Fatal(err)
	}
	e.Eventually("replicas by Slurm state", func() (bool, string) {
		got := metric(t, reg, e.NS, "volcano_nodeset_replicas_by_slurm_state")
		return got == "nodeset=met,state=allocated=1 nodeset=met,state=down=0 nodeset=met,state=drain=0 nodeset=met,state=idle=1", got
	})
	e.Eventually("replicas by status", func() (bool, string) {
		got := metric(t, reg, e.NS, "volcano_nodeset_replicas")
		return got == "nodeset=met,status=available=2 nodeset=met,status=current=2 nodeset=met,status=desired=2 "+
			"nodeset=met,status=ready=2 nodeset=met,status=unavailable=0 nodeset=met,status=updated=2", got
	})
	if got := metric(t, reg, e.NS, "volcano_nodeset_pods_created_total"); got != "=2" {
		t.Errorf("pods created: %s", got)
	}
	if got := metric(t, reg, e.NS, "volcano_nodeset_controller_syncs_total"); got == "" || got == "=0" {
		t.Errorf("syncs: %q", got)
	}

	if err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Delete(e.Ctx, "met", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("series of the deleted NodeSet gone", func() (bool, string) {
		a, b := metric(t, reg, e.NS, "volcano_nodeset_replicas"), metric(t, reg, e.NS, "volcano_nodeset_replicas_by_slurm_state")
		return a == "" && b == "", a + " " + b
	})
}
