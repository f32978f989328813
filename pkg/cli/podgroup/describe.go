package podgroup

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DescribeOptions holds the input of 'podgroup describe'.
type DescribeOptions struct {
	genericiooptions.IOStreams
	Factory   util.Factory
	Name      string
	Namespace string

	vc versioned.Interface
	kc kubernetes.Interface
}

func newDescribeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DescribeOptions{IOStreams: streams, Factory: f}
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a podgroup in detail",
		Long: templates.LongDesc(`
			Show a podgroup's spec (minMember, queue, minResources, priority class,
			network topology), status and conditions, owners, member pods (pods
			annotated scheduling.k8s.io/group-name) with phase and node, and events.`),
		Example: templates.Examples(`
			kubectl vc podgroup describe my-job -n batch`),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completion.PodGroupNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
}

// Complete records the name and resolves the namespace and the clients.
func (o *DescribeOptions) Complete(args []string) error {
	if len(args) == 0 {
		return util.UsageErrorf("name the podgroup to describe, e.g. 'podgroup describe my-job -n batch'")
	}
	o.Name = args[0]
	ns, _, err := o.Factory.Namespace()
	if err != nil {
		return util.UsageErrorf("cannot read the namespace from the kubeconfig: %s", util.Message(err))
	}
	o.Namespace = ns
	if o.vc, err = o.Factory.VolcanoClient(); err != nil {
		return err
	}
	o.kc, err = o.Factory.KubeClient()
	return err
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
	pg, err := o.vc.SchedulingV1beta1().PodGroups(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(o.Out, 0, 8, 2, ' ', 0)
	defer w.Flush()
	line := func(indent int, label string, value any) {
		fmt.Fprintf(w, "%s%s:\t%v\n", strings.Repeat("  ", indent), label, value)
	}
	line(0, "Name", pg.Name)
	line(0, "Namespace", pg.Namespace)
	line(0, "Labels", vcprinters.MapString(pg.Labels))
	line(0, "Annotations", vcprinters.MapString(pg.Annotations))
	line(0, "Created", pg.CreationTimestamp.Format("2006-01-02T15:04:05Z07:00")+" ("+vcprinters.Age(pg.CreationTimestamp)+" ago)")
	var owners []string
	for _, r := range pg.OwnerReferences {
		owners = append(owners, r.Kind+"/"+r.Name)
	}
	line(0, "Controlled By", vcprinters.OrNone(strings.Join(owners, ", ")))
	fmt.Fprintln(w, "Spec:")
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
	fmt.Fprintln(w, "Status:")
	line(1, "Phase", phaseOf(pg))
	line(1, "Running", pg.Status.Running)
	line(1, "Succeeded", pg.Status.Succeeded)
	line(1, "Failed", pg.Status.Failed)
	if len(pg.Status.Conditions) == 0 {
		line(1, "Conditions", "<none>")
	} else {
		fmt.Fprintln(w, "  Conditions:")
		fmt.Fprintln(w, "    Type\tStatus\tReason\tMessage")
		for _, cd := range pg.Status.Conditions {
			fmt.Fprintf(w, "    %s\t%s\t%s\t%s\n", cd.Type, cd.Status, cd.Reason, cd.Message)
		}
	}
	pods, err := o.kc.CoreV1().Pods(pg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		line(0, "Pods", "<cannot list: "+util.Message(err)+">")
	} else {
		var rows []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Annotations[keys.KubeGroupName] != pg.Name {
				continue
			}
			rows = append(rows, fmt.Sprintf("  %s\t%s\t%s", p.Name, p.Status.Phase, vcprinters.OrNone(p.Spec.NodeName)))
		}
		sort.Strings(rows)
		if len(rows) == 0 {
			line(0, "Pods", "<none>")
		} else {
			fmt.Fprintln(w, "Pods:")
			fmt.Fprintln(w, "  Name\tPhase\tNode")
			for _, r := range rows {
				fmt.Fprintln(w, r)
			}
		}
	}
	vcprinters.WriteEvents(ctx, w, o.kc, pg.Namespace, "PodGroup", pg.Name, pg.UID)
	return nil
}
