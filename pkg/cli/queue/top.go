package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// sortByName is the --sort-by value that orders queues by name.
const sortByName = "name"

// topOutputs are the -o values of 'queue top' besides the table.
var topOutputs = []string{"json", "yaml"}

// TopOptions holds the input of 'queue top'.
type TopOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	// SortBy is "" (each queue's largest share of a deserved resource),
	// "name" or a resource name (the share of that resource).
	SortBy    string
	Output    string
	NoHeaders bool

	// ChunkSize is how many queues one list request reads (0: all).
	ChunkSize int64

	client versioned.Interface
}

func newTopCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TopOptions{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show how much of its deserved share each queue uses",
		Long: templates.LongDesc(`
			Show, for every queue, what the scheduler has allocated to it (status.allocated)
			against what it deserves, per resource: "12/16 (75%)" is 12 allocated of 16
			deserved. Above 100% a queue is borrowing; "-" means the queue neither
			deserves nor was allocated that resource. Percentages are rounded down.

			Queues are shown in their hierarchy, children indented under their parent as in
			'queue tree', and siblings are ordered by use, highest first: by default by their
			largest share of any deserved resource, with --sort-by by the share of one
			resource, or by name. Queues with no share to compare come last.

			-o json and -o yaml print the same rows, each with its parent and, per resource,
			allocated, deserved, capability and percent.`),
		Example: templates.Examples(`
			# Queues by their largest share of a deserved resource
			kubectl vc queue top

			# Queues by their share of deserved GPUs
			kubectl vc queue top --sort-by nvidia.com/gpu

			# Rows for scripts
			kubectl vc queue top -o json`),
		Args: cobra.NoArgs,
		RunE: util.RunENoArgs(o),
	}
	cmd.Flags().StringVar(&o.SortBy, "sort-by", "", "Order siblings by the share of this resource's deserved amount in use (e.g. cpu, nvidia.com/gpu), highest first, or by name; by default by each queue's largest share")
	util.AddOutputFlag(cmd, &o.Output, topOutputs...)
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", false, "Don't print the table's header")
	_ = cmd.RegisterFlagCompletionFunc("sort-by", sortByCompletion(f))
	chunk.AddFlag(cmd, &o.ChunkSize)
	return cmd
}

// sortByCompletion offers name and every resource the cluster's queues
// allocate or deserve (those with a column).
func sortByCompletion(f util.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		names := []string{sortByName}
		if c, err := f.VolcanoClient(); err == nil {
			if list, err := c.SchedulingV1beta1().Queues().List(cmd.Context(), metav1.ListOptions{}); err == nil {
				names = append(names, queueResources(list.Items)...)
			}
		}
		return completion.Filter(names, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// Complete resolves the client.
func (o *TopOptions) Complete() error {
	var err error
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks -o, --chunk-size and the form of --sort-by; whether some queue has the
// resource is checked once queues are read.
func (o *TopOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	if err := util.ValidateOutput(o.Output, topOutputs...); err != nil {
		return err
	}
	if o.SortBy == "" || o.SortBy == sortByName {
		return nil
	}
	if errs := validation.IsQualifiedName(o.SortBy); len(errs) > 0 {
		return util.UsageErrorf("invalid --sort-by %q: give name or a resource name such as cpu or nvidia.com/gpu", o.SortBy)
	}
	return nil
}

// Run lists queues once and prints their use.
func (o *TopOptions) Run(ctx context.Context) error {
	items, _, err := chunk.List[schedulingv1beta1.Queue](ctx, o.ChunkSize, metav1.ListOptions{}, o.client.SchedulingV1beta1().Queues().List)
	if err != nil {
		return err
	}
	rows, err := topRows(items, o.SortBy)
	if err != nil {
		return err
	}
	switch o.Output {
	case "json":
		out, err := json.MarshalIndent(topDocument(rows), "", "    ")
		if err != nil {
			return err
		}
		_, err = o.Out.Write(append(out, '\n'))
		return err
	case "yaml":
		out, err := yaml.Marshal(topDocument(rows))
		if err != nil {
			return err
		}
		_, err = o.Out.Write(out)
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintln(o.ErrOut, "No queues found.")
		return nil
	}
	header, cells := topTable(rows)
	if o.NoHeaders {
		header = nil
	}
	if err := printTable(o.Out, header, cells); err != nil {
		return err
	}
	if len(cells) > 0 && len(cells[0]) == 1 {
		// Only the QUEUE column: say why rather than leave a bare tree.
		fmt.Fprintln(o.ErrOut, "No queue deserves or has been allocated any resource yet, so there is no share to show: 'queue top' compares status.allocated (written by Volcano's scheduler) with spec.deserved. Capabilities are shown by 'kubectl vc queue list -o wide'.")
	}
	return nil
}

// topRow is one queue of 'queue top', in display order.
type topRow struct {
	Name string
	// Indent is the tree drawn before the name; Label says what is wrong
	// with a top-level queue other than root.
	Indent, Label string
	Parent        string
	Problem       string
	Usage         []usageRow
}

// queueResources lists, sorted, every resource some queue allocates or
// deserves: those 'queue top' has a column for, and sorts by. A resource
// queues only cap has no share to show.
func queueResources(items []schedulingv1beta1.Queue) []string {
	seen := map[string]bool{}
	for i := range items {
		for _, u := range queueUsage(&items[i]) {
			if u.Allocated != nil || u.Deserved != nil {
				seen[string(u.Resource)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// topRows orders the queues as 'queue top' shows them: the hierarchy, with
// siblings by their share of sortBy's deserved amount (largest share of
// any resource for "", name for "name"), highest first, then by name.
// A resource no queue has is a usage error.
func topRows(items []schedulingv1beta1.Queue, sortBy string) ([]topRow, error) {
	if sortBy != "" && sortBy != sortByName && len(items) > 0 {
		known := queueResources(items)
		found := false
		for _, r := range known {
			found = found || r == sortBy
		}
		switch {
		case !found && len(known) == 0:
			return nil, util.UsageErrorf("invalid --sort-by %q: no queue allocates or deserves any resource yet, so there is no column to sort by; use name", sortBy)
		case !found:
			return nil, util.UsageErrorf("invalid --sort-by %q: no queue allocates or deserves it, so there is no column for it; use name or one of %s", sortBy, strings.Join(known, ", "))
		}
	}
	f := newForest(items)
	usage := make(map[string][]usageRow, len(items))
	for name, q := range f.byName {
		usage[name] = queueUsage(q)
	}
	key := func(name string) (float64, bool) { return sortShare(usage[name], sortBy) }
	f.sort(func(a, b string) bool {
		if sortBy == sortByName {
			return a < b
		}
		sa, oka := key(a)
		sb, okb := key(b)
		if oka != okb {
			return oka
		}
		return oka && sa > sb
	})
	var rows []topRow
	f.walk(func(name, label, indent string) {
		rows = append(rows, topRow{Name: name, Indent: indent, Label: label, Parent: rules.EffectiveParent(f.byName[name]),
			Problem: f.problem[name], Usage: usage[name]})
	})
	return rows, nil
}

// sortShare is the share a queue is ordered by: of resource r's deserved
// amount, or with r "" the largest share of any resource it deserves
// (Volcano's proportion plugin also weighs a queue by its largest share).
func sortShare(rows []usageRow, r string) (float64, bool) {
	best, found := 0.0, false
	for _, u := range rows {
		if r != "" && string(u.Resource) != r {
			continue
		}
		if s, ok := share(u.Allocated, u.Deserved); ok && (!found || s > best) {
			best, found = s, true
		}
	}
	return best, found
}

// topTable is the header and cells of the table: QUEUE, then a column per
// resource some queue allocates or deserves ("12/16 (75%)"; "-" where the
// queue has neither). Resources queues only cap get no column.
func topTable(rows []topRow) ([]string, [][]string) {
	seen := map[corev1.ResourceName]bool{}
	for _, r := range rows {
		for _, u := range r.Usage {
			if u.Allocated != nil || u.Deserved != nil {
				seen[u.Resource] = true
			}
		}
	}
	resources := make([]corev1.ResourceName, 0, len(seen))
	for r := range seen {
		resources = append(resources, r)
	}
	sort.Slice(resources, func(i, j int) bool { return resources[i] < resources[j] })
	header := []string{"QUEUE"}
	for _, r := range resources {
		header = append(header, strings.ToUpper(string(r)))
	}
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		byRes := map[corev1.ResourceName]usageRow{}
		for _, u := range r.Usage {
			byRes[u.Resource] = u
		}
		row := []string{r.Indent + r.Name + r.Label}
		for _, res := range resources {
			u, ok := byRes[res]
			if !ok || (u.Allocated == nil && u.Deserved == nil) {
				row = append(row, "-")
				continue
			}
			row = append(row, usageAgainstDeserved(u))
		}
		cells = append(cells, row)
	}
	return header, cells
}

// usageAgainstDeserved is usageCell without the resource name:
// "12/16 (75%)", "3/-" with no deserved amount.
func usageAgainstDeserved(u usageRow) string {
	return strings.TrimPrefix(usageCell(u), string(u.Resource)+" ")
}

// topDoc is the document of 'queue top -o json|yaml': the rows in the
// order of the table.
type topDoc struct {
	Queues []topQueue `json:"queues"`
}

type topQueue struct {
	Name string `json:"name"`
	// Parent is the effective parent (root for an empty spec.parent);
	// absent for root.
	Parent string `json:"parent,omitempty"`
	// Problem says why the queue cannot hang under root, as in 'queue tree'.
	Problem   string        `json:"problem,omitempty"`
	Resources []topResource `json:"resources"`
}

// topResource is one resource of a queue. Allocated is "0" when the
// scheduler wrote none; Deserved and Capability are absent when the queue
// does not set them, and Percent (allocated as a whole percentage of
// deserved, rounded down) when there is no deserved amount.
type topResource struct {
	Name       corev1.ResourceName `json:"name"`
	Allocated  resource.Quantity   `json:"allocated"`
	Deserved   *resource.Quantity  `json:"deserved,omitempty"`
	Capability *resource.Quantity  `json:"capability,omitempty"`
	Percent    *int64              `json:"percent,omitempty"`
}

func topDocument(rows []topRow) topDoc {
	doc := topDoc{Queues: make([]topQueue, 0, len(rows))}
	for _, r := range rows {
		q := topQueue{Name: r.Name, Parent: r.Parent, Problem: r.Problem, Resources: make([]topResource, 0, len(r.Usage))}
		for _, u := range r.Usage {
			res := topResource{Name: u.Resource, Allocated: resource.MustParse("0"), Deserved: u.Deserved, Capability: u.Capability}
			if u.Allocated != nil {
				res.Allocated = *u.Allocated
			}
			if p, ok := percentOf(u.Allocated, u.Deserved); ok {
				res.Percent = &p
			}
			q.Resources = append(q.Resources, res)
		}
		doc.Queues = append(doc.Queues, q)
	}
	return doc
}
