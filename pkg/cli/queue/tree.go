package queue

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// TreeOptions holds the input of 'queue tree'.
type TreeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	client versioned.Interface
}

func newTreeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{IOStreams: streams, Factory: f}
	return &cobra.Command{
		Use:   "tree",
		Short: "Show the queue hierarchy with states and podgroup counts",
		Long: templates.LongDesc(`
			Show queues as a tree under root, with each queue's state, weight and podgroup
			counts. Queues that cannot hang under root are listed after the tree, each
			with what is wrong and its own subtree: a queue whose parent does not exist,
			and every queue of a parent cycle.`),
		Example: templates.Examples(`
			kubectl vc queue tree`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
}

// Complete resolves the client.
func (o *TreeOptions) Complete() error {
	var err error
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Run lists queues (and, where needed, podgroups) once and prints the tree.
func (o *TreeOptions) Run(ctx context.Context) error {
	c := o.client
	list, err := c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	cnt := queueCounts(ctx, c, list.Items)
	byName := map[string]*schedulingv1beta1.Queue{}
	for i := range list.Items {
		q := &list.Items[i]
		byName[q.Name] = q
	}
	// Queues that cannot hang under root: those whose parent is missing
	// and those in a parent cycle. Each is shown at the top level with
	// what is wrong, its subtree below it.
	cycles := map[string]string{}
	var orphans, inCycle []string
	for name, q := range byName {
		if name == keys.RootQueue {
			continue
		}
		if a, err := rules.WalkUp(name, rules.MapLookup(byName)); err == nil && a.InCycle() {
			cycles[name] = rules.FormatCycle(a.Cycle())
			inCycle = append(inCycle, name)
			continue
		}
		if _, ok := byName[parentOf(q)]; !ok {
			orphans = append(orphans, name)
		}
	}
	children := map[string][]string{}
	for name, q := range byName {
		if name != keys.RootQueue && cycles[name] == "" {
			children[parentOf(q)] = append(children[parentOf(q)], name)
		}
	}
	for _, c := range children {
		sort.Strings(c)
	}
	sort.Strings(orphans)
	sort.Strings(inCycle)

	// Rows are collected first and rendered once, so that columns are as
	// wide as their widest cell.
	var rows [][]string
	var walk func(name, label, prefix, branch string)
	walk = func(name, label, prefix, branch string) {
		q := byName[name]
		n := cnt[name]
		rows = append(rows, []string{prefix + branch + name + label, string(stateOf(q)), itoa(q.Spec.Weight),
			itoa(n.Inqueue), itoa(n.Pending), itoa(n.Running), itoa(n.Unknown), itoa(n.Completed)})
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
			walk(k, "", next, b)
		}
	}
	if _, ok := byName[keys.RootQueue]; ok {
		walk(keys.RootQueue, "", "", "")
	}
	for _, name := range orphans {
		walk(name, fmt.Sprintf(" (parent %q missing)", parentOf(byName[name])), "", "")
	}
	for _, name := range inCycle {
		walk(name, " (parent cycle "+cycles[name]+")", "", "")
	}
	if err := printTable(o.Out, []string{"QUEUE", "STATE", "WEIGHT", "INQUEUE", "PENDING", "RUNNING", "UNKNOWN", "COMPLETED"}, rows); err != nil {
		return err
	}
	if len(list.Items) == 0 {
		fmt.Fprintln(o.ErrOut, "No queues found.")
	}
	return nil
}

func itoa(i int32) string { return strconv.FormatInt(int64(i), 10) }

// printTable writes header and rows the way kubectl prints tables: no
// borders or lines, the header as given (upper case), every cell left
// aligned and unwrapped, and columns at least two spaces apart. Cells are
// not trimmed, so the tree prefixes of the first column keep their
// leading spaces, and widths are counted per character whatever the
// locale, so the tree glyphs stay aligned. Trailing blanks are dropped.
func printTable(out io.Writer, header []string, rows [][]string) error {
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithPadding(tw.Padding{Right: "  ", Overwrite: true}),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithEastAsian(tw.Off),
	)
	table.Header(header)
	for _, r := range rows {
		if err := table.Append(r); err != nil {
			return err
		}
	}
	if err := table.Render(); err != nil {
		return err
	}
	var b strings.Builder
	for line := range strings.Lines(buf.String()) {
		b.WriteString(strings.TrimRight(line, " \n"))
		b.WriteString("\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}
