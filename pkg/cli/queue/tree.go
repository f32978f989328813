package queue

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// TreeOptions holds the input of 'queue tree'.
type TreeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory
}

func newTreeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{IOStreams: streams, Factory: f}
	return &cobra.Command{
		Use:   "tree",
		Short: "Show the queue hierarchy with states and podgroup counts",
		Long: `Show queues as a tree under root, with each queue's state, weight and podgroup
counts. Queues whose parent does not exist are listed after the tree.`,
		Example: `  kubectl vc queue tree`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context())
		},
	}
}

// Run lists queues (and, where needed, podgroups) once and prints the tree.
func (o *TreeOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := o.Factory.VolcanoClient()
	if err != nil {
		return err
	}
	list, err := c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	cnt := queueCounts(ctx, c, list.Items)
	byName := map[string]*schedulingv1beta1.Queue{}
	children := map[string][]string{}
	for i := range list.Items {
		q := &list.Items[i]
		byName[q.Name] = q
	}
	var orphans []string
	for name, q := range byName {
		if name == keys.RootQueue {
			continue
		}
		p := parentOf(q)
		if _, ok := byName[p]; !ok {
			orphans = append(orphans, name)
			continue
		}
		children[p] = append(children[p], name)
	}
	for _, c := range children {
		sort.Strings(c)
	}
	sort.Strings(orphans)

	w := tabwriter.NewWriter(o.Out, 0, 8, 2, ' ', 0)
	defer w.Flush()
	fmt.Fprintln(w, "QUEUE\tSTATE\tWEIGHT\tINQUEUE\tPENDING\tRUNNING\tUNKNOWN\tCOMPLETED")
	seen := map[string]bool{}
	var walk func(name, prefix, branch string)
	walk = func(name, prefix, branch string) {
		if seen[name] {
			return // a parent cycle: print each queue once
		}
		seen[name] = true
		q := byName[name]
		n := cnt[name]
		fmt.Fprintf(w, "%s%s%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", prefix, branch, name, stateOf(q), q.Spec.Weight,
			n.Inqueue, n.Pending, n.Running, n.Unknown, n.Completed)
		kids := children[name]
		next := prefix
		switch branch {
		case "├── ":
			next += "│   "
		case "└── ":
			next += "    "
		}
		for i, k := range kids {
			b := "├── "
			if i == len(kids)-1 {
				b = "└── "
			}
			walk(k, next, b)
		}
	}
	if _, ok := byName[keys.RootQueue]; ok {
		walk(keys.RootQueue, "", "")
	}
	for _, name := range orphans {
		q := byName[name]
		fmt.Fprintf(w, "%s (parent %q missing)\t%s\t%d\t\t\t\t\t\n", name, parentOf(q), stateOf(q), q.Spec.Weight)
		seen[name] = true
	}
	// Queues only reachable through a cycle.
	var rest []string
	for name := range byName {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		fmt.Fprintf(w, "%s (in a parent cycle)\t%s\t%d\t\t\t\t\t\n", name, stateOf(byName[name]), byName[name].Spec.Weight)
	}
	if len(list.Items) == 0 {
		fmt.Fprintln(o.ErrOut, "No queues found.")
	}
	return nil
}
