package podgroup

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/verdict"
)

// DescribeOptions holds the input of 'podgroup describe'.
type DescribeOptions struct {
	vcprinters.DescribeOptions
}

func newDescribeOptions(f util.Factory, streams genericiooptions.IOStreams) *DescribeOptions {
	return &DescribeOptions{vcprinters.DescribeOptions{IOStreams: streams, Factory: f, NoName: "name the podgroup to describe, e.g. 'kubectl vc podgroup describe my-job -n batch'"}}
}

func newDescribeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := newDescribeOptions(f, streams)
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a podgroup in detail",
		Long: templates.LongDesc(`
			Show a podgroup's spec (minMember, queue, minResources, priority class,
			network topology), status and conditions, owners, member pods (pods
			annotated scheduling.k8s.io/group-name) with phase and node, and events.`),
		Example: templates.Examples(`
			kubectl vc podgroup describe my-job -n batch`),
		Args:              util.NameArgs("podgroup", 1, 1, "podgroup describe my-job -n batch"),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
}

// Validate checks the name.
func (o *DescribeOptions) Validate() error {
	if errs := validation.IsDNS1123Subdomain(o.Name); len(errs) > 0 {
		return util.UsageErrorf("invalid podgroup name %q: %s", o.Name, errs[0])
	}
	return nil
}

// Run prints the description; member pods and events that cannot be
// listed are reported in place.
func (o *DescribeOptions) Run(ctx context.Context) error {
	pg, err := o.Client.SchedulingV1beta1().PodGroups(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return util.InNamespace(err, o.Namespace)
	}
	d := vcprinters.NewDescriber(o.Out)
	defer d.Flush()
	line := d.Line
	d.Header(pg)
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
	d.Events(ctx, o.Kube, pg.Namespace, "PodGroup", pg)
	verdict.Describe(ctx, d, o.Client, o.Kube, analysis.PodGroup, pg.Namespace, pg.Name)
	return nil
}
