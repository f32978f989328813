package queue

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/verdict"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// DescribeOptions holds the input of 'queue describe'.
type DescribeOptions struct {
	vcprinters.DescribeOptions
}

func newDescribeOptions(f util.Factory, streams genericiooptions.IOStreams) *DescribeOptions {
	return &DescribeOptions{vcprinters.DescribeOptions{IOStreams: streams, Factory: f, ClusterScoped: true, NoName: "name the queue to describe, e.g. 'kubectl vc queue describe team-a'"}}
}

func newDescribeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := newDescribeOptions(f, streams)
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a queue in detail",
		Long: templates.LongDesc(`
			Show a queue's spec and status, what the scheduler has allocated to it
			against its deserved share and capability per resource, its child queues,
			its podgroups by phase, Commands still waiting for the controller, and its
			events.`),
		Example: templates.Examples(`
			kubectl vc queue describe team-a`),
		Args:              util.NameArgs("queue", 1, 1, "queue describe team-a"),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
}

// Validate checks the name.
func (o *DescribeOptions) Validate() error { return validateName(o.Name) }

// Run prints the description. Only the queue itself must be readable;
// related objects that cannot be listed are reported in place.
func (o *DescribeOptions) Run(ctx context.Context) error {
	c := o.Client
	q, err := c.SchedulingV1beta1().Queues().Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	d := vcprinters.NewDescriber(o.Out)
	defer d.Flush()
	line := d.Line
	d.Header(q)
	d.Section(0, "Spec")
	line(1, "Parent", parentOf(q))
	line(1, "Weight", q.Spec.Weight)
	line(1, "Priority", q.Spec.Priority)
	reclaimable := "<unset> (true)"
	if q.Spec.Reclaimable != nil {
		reclaimable = fmt.Sprint(*q.Spec.Reclaimable)
	}
	line(1, "Reclaimable", reclaimable)
	line(1, "Capability", vcprinters.OrNone(vcprinters.Resources(q.Spec.Capability)))
	line(1, "Deserved", vcprinters.OrNone(vcprinters.Resources(q.Spec.Deserved)))
	line(1, "Guarantee", vcprinters.OrNone(vcprinters.Resources(q.Spec.Guarantee.Resource)))
	if q.Spec.DequeueStrategy != "" {
		line(1, "Dequeue Strategy", q.Spec.DequeueStrategy)
	}
	d.Section(0, "Status")
	line(1, "State", stateOf(q))
	if problem := q.Annotations[rules.HierarchyProblemAnnotation]; problem != "" {
		line(1, "Hierarchy", problem)
	}
	line(1, "Allocated", vcprinters.OrNone(vcprinters.Resources(q.Status.Allocated)))
	var usage []string
	for _, u := range queueUsage(q) {
		usage = append(usage, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", u.Resource, quantity(u.Allocated, "0"),
			quantity(u.Deserved, "-"), quantity(u.Capability, "-"),
			percent(u.Allocated, u.Deserved), percent(u.Allocated, u.Capability)))
	}
	d.Table(0, "Usage", "Resource\tAllocated\tDeserved\tCapability\t% Deserved\t% Capability", usage)

	cnt := queueCounts(ctx, c, []schedulingv1beta1.Queue{*q}, countPages(nil, 0))[q.Name]
	source := "status"
	if q.Status.State == "" {
		source = "podgroups"
	}
	d.Section(0, "Podgroups (from "+source+")")
	line(1, "Inqueue", cnt.Inqueue)
	line(1, "Pending", cnt.Pending)
	line(1, "Running", cnt.Running)
	line(1, "Unknown", cnt.Unknown)
	line(1, "Completed", cnt.Completed)

	if all, err := c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{}); err != nil {
		d.CannotList(0, "Child Queues", err)
	} else {
		var children []string
		for i := range all.Items {
			ch := &all.Items[i]
			if ch.Name != q.Name && parentOf(ch) == q.Name {
				children = append(children, fmt.Sprintf("%s (%s)", ch.Name, stateOf(ch)))
			}
		}
		sort.Strings(children)
		line(0, "Child Queues", vcprinters.OrNone(strings.Join(children, ", ")))
	}

	if cmds, err := c.BusV1alpha1().Commands(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err != nil {
		d.CannotList(0, "Pending Commands", err)
	} else {
		var rows []string
		for i := range cmds.Items {
			cm := &cmds.Items[i]
			if t := cm.TargetObject; t != nil && t.Kind == "Queue" && t.Name == q.Name {
				rows = append(rows, fmt.Sprintf("%s/%s\t%s\t%s ago", cm.Namespace, cm.Name, cm.Action, vcprinters.Age(cm.CreationTimestamp)))
			}
		}
		d.Table(0, "Pending Commands", "", rows)
	}
	d.Events(ctx, o.Kube, metav1.NamespaceAll, "Queue", q)
	verdict.Describe(ctx, d, o.Client, o.Kube, analysis.Queue, "", q.Name)
	return nil
}
