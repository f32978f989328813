package podgroup

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
)

// describeHelp is the help of 'podgroup describe'.
var describeHelp = kind.Help{
	Short: "Show a podgroup in detail",
	Long: `
			Show a podgroup's spec (minMember, queue, minResources, priority class,
			network topology), status and conditions, owners, member pods (pods
			annotated scheduling.k8s.io/group-name) with phase and node, the last
			evictions Volcano's scheduler made of its pods and those it made room for
			(inferred, see 'kubectl vc evictions'), and events.`,
	Example: `
			kubectl vc podgroup describe my-job -n batch`,
}

// describePodGroup writes a podgroup's owners, spec, status and
// conditions, and its member pods; pods that cannot be listed are
// reported in place.
func describePodGroup(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, pg *schedulingv1beta1.PodGroup) {
	line := d.Line
	var owners []string
	for _, r := range pg.OwnerReferences {
		owners = append(owners, r.Kind+"/"+r.Name)
	}
	line(0, "Controlled By", vcprinters.OrNone(strings.Join(owners, ", ")))
	d.Section(0, "Spec")
	line(1, "Queue", queueOf(pg))
	line(1, "Min Member", pg.Spec.MinMember)
	minRes := ""
	if pg.Spec.MinResources != nil {
		minRes = vcprinters.Resources(*pg.Spec.MinResources)
	}
	line(1, "Min Resources", vcprinters.OrNone(minRes))
	line(1, "Priority Class", vcprinters.OrNone(pg.Spec.PriorityClassName))
	if nt := pg.Spec.NetworkTopology; nt != nil {
		tier := "<none>"
		if nt.HighestTierAllowed != nil {
			tier = fmt.Sprint(*nt.HighestTierAllowed)
		}
		if nt.HighestTierName != "" {
			tier += " (" + nt.HighestTierName + ")"
		}
		line(1, "Network Topology", fmt.Sprintf("mode %s, highest tier %s", nt.Mode, tier))
	} else {
		line(1, "Network Topology", "<none>")
	}
	d.Section(0, "Status")
	line(1, "Phase", phaseOf(pg))
	line(1, "Running", pg.Status.Running)
	line(1, "Succeeded", pg.Status.Succeeded)
	line(1, "Failed", pg.Status.Failed)
	var conds []string
	for _, cd := range pg.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s\t%s\t%s\t%s", cd.Type, cd.Status, cd.Reason, cd.Message))
	}
	d.Table(1, "Conditions", "Type\tStatus\tReason\tMessage", conds)
	pods, err := o.Kube.CoreV1().Pods(pg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		d.CannotList(0, "Pods", err)
	} else {
		var rows []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Annotations[keys.KubeGroupName] != pg.Name {
				continue
			}
			rows = append(rows, fmt.Sprintf("%s\t%s\t%s", p.Name, p.Status.Phase, vcprinters.OrNone(p.Spec.NodeName)))
		}
		sort.Strings(rows)
		d.Table(0, "Pods", "Name\tPhase\tNode", rows)
	}
	evictions.Describe(ctx, d, o.Kube, o.Client, pg.Namespace,
		func(ev *infer.Eviction) bool { return ev.Namespace == pg.Namespace && ev.Group == pg.Name },
		func(ev *infer.Eviction) bool { return ev.For.Namespace == pg.Namespace && ev.For.Group == pg.Name })
}
