package queue

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// describeHelp is the help of 'queue describe'.
var describeHelp = kind.Help{
	Short: "Show a queue in detail",
	Long: `
			Show a queue's spec and status, what the scheduler has allocated to it
			against its deserved share and capability per resource, its child queues,
			its podgroups by phase, Commands still waiting for the controller, the last
			evictions Volcano's scheduler made of its work and those its work caused
			(inferred, see 'kubectl vc evictions'), and its events.`,
	Example: `
			kubectl vc queue describe team-a`,
}

// describeQueue writes a queue's spec and status, its usage against its
// deserved share and capability, its podgroups by phase, its child queues
// and the Commands still waiting for the controller. Related objects that
// cannot be listed are reported in place.
func describeQueue(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, q *schedulingv1beta1.Queue) {
	c := o.Client
	line := d.Line
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
	line(1, "State", rules.StateOrOpen(q.Status.State))
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
	if !rules.QueueStatusKept(q) {
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
				children = append(children, fmt.Sprintf("%s (%s)", ch.Name, rules.StateOrOpen(ch.Status.State)))
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
	evictions.Describe(ctx, d, o.Kube, c, metav1.NamespaceAll,
		func(ev *infer.Eviction) bool { return ev.Queue == q.Name },
		func(ev *infer.Eviction) bool { return ev.For.Queue == q.Name })
}
