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
			counts. Queues whose parent does not exist are listed after the tree.`),
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

	// Rows are collected first and rendered once, so that columns are as
	// wide as their widest cell.
	var rows [][]string
	seen := map[string]bool{}
	var walk func(name, prefix, branch string)
	walk = func(name, prefix, branch string) {
		if seen[name] {
			return // a parent cycle: print each queue once
		}
		seen[name] = true
		q := byName[name]
		n := cnt[name]
		rows = append(rows, []string{prefix + branch + name, string(stateOf(q)), itoa(q.Spec.Weight),
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
			walk(k, next, b)
		}
	}
	if _, ok := byName[keys.RootQueue]; ok {
		walk(keys.RootQueue, "", "")
	}
	for _, name := range orphans {
		q := byName[name]
		rows = append(rows, []string{fmt.Sprintf("%s (parent %q missing)", name, parentOf(q)), string(stateOf(q)), itoa(q.Spec.Weight), "", "", "", "", ""})
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
		rows = append(rows, []string{name + " (in a parent cycle)", string(stateOf(byName[name])), itoa(byName[name].Spec.Weight), "", "", "", "", ""})
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
