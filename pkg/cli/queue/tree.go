package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// TreeOptions holds the input of 'queue tree'.
type TreeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	// Output is "", wide, json or yaml.
	Output string
	Watch  bool

	last []byte // what the last print showed

	// ChunkSize is how many queues one list request reads (0: all).
	ChunkSize int64
	// chunkFlag tells whether --chunk-size was given (countPages).
	chunkFlag *pflag.Flag

	client versioned.Interface
}

// treeOutputs are the -o values of 'queue tree'.
var treeOutputs = []string{"wide", "json", "yaml"}

func newTreeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Show the queue hierarchy with states and podgroup counts",
		Long: templates.LongDesc(`
			Show queues as a tree under root, with each queue's state, weight and podgroup
			counts. Queues that cannot hang under root are listed after the tree, each
			with what is wrong and its own subtree: a queue whose parent does not exist,
			and every queue of a parent cycle.

			-o wide adds each queue's deserved, capability and allocated resources; -o json
			and -o yaml print the same tree nested, children inside their parent. With
			--watch the whole tree is printed again whenever a queue changes.`),
		Example: templates.Examples(`
			# The hierarchy
			kubectl vc queue tree

			# With deserved, capability and allocated resources
			kubectl vc queue tree -o wide

			# The nested tree for scripts
			kubectl vc queue tree -o json

			# Print the tree again on every change
			kubectl vc queue tree --watch`),
		Args: cobra.NoArgs,
		RunE: util.RunENoArgs(o),
	}
	util.AddOutputFlag(cmd, &o.Output, treeOutputs...)
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After printing the tree, print it again whenever a queue changes")
	chunk.AddFlag(cmd, &o.ChunkSize)
	o.chunkFlag = cmd.Flags().Lookup("chunk-size")
	return cmd
}

// Complete resolves the client.
func (o *TreeOptions) Complete() error {
	var err error
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks -o and --chunk-size.
func (o *TreeOptions) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	return util.ValidateOutput(o.Output, treeOutputs...)
}

// Run lists queues (and, where needed, podgroups) and prints the tree;
// with --watch it then watches queues from the list's resourceVersion and
// prints the tree again after each change, until ctx ends.
func (o *TreeOptions) Run(ctx context.Context) error {
	items, rv, err := chunk.List[schedulingv1beta1.Queue](ctx, o.ChunkSize, metav1.ListOptions{}, o.client.SchedulingV1beta1().Queues().List)
	if err != nil {
		return err
	}
	byName := make(map[string]schedulingv1beta1.Queue, len(items))
	for _, q := range items {
		byName[q.Name] = q
	}
	if err := o.print(ctx, byName, true); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	return o.watch(ctx, rv, byName)
}

// watch keeps byName up to date from a watch that client-go's
// RetryWatcher resumes across server timeouts, and prints the tree once
// per batch of changes (events already waiting are applied first).
func (o *TreeOptions) watch(ctx context.Context, rv string, byName map[string]schedulingv1beta1.Queue) error {
	rw, err := follow.Start(ctx, rv, metav1.ListOptions{}, o.client.SchedulingV1beta1().Queues().Watch)
	if err != nil {
		return err
	}
	defer rw.Stop()
	apply := func(ev watch.Event, ok bool) error {
		if !ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return follow.ErrEnded
		}
		if err := follow.EventError(ev); err != nil {
			return err
		}
		switch ev.Type {
		case watch.Added, watch.Modified:
			if q, ok := ev.Object.(*schedulingv1beta1.Queue); ok {
				byName[q.Name] = *q
			}
		case watch.Deleted:
			if q, ok := ev.Object.(*schedulingv1beta1.Queue); ok {
				delete(byName, q.Name)
			}
		}
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-rw.ResultChan():
			if err := apply(ev, ok); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	drain:
		for {
			select {
			case ev, ok := <-rw.ResultChan():
				if err := apply(ev, ok); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
			default:
				break drain
			}
		}
		if err := o.print(ctx, byName, false); err != nil {
			return err
		}
	}
}

// print writes the tree once; a watch prints it again only when what it
// shows has changed (a queue's status written again with the same
// counts, or a change to fields the tree does not show, prints nothing).
// Later prints are set apart: a blank line before a table, "---" before a
// YAML document.
func (o *TreeOptions) print(ctx context.Context, byName map[string]schedulingv1beta1.Queue, first bool) error {
	var buf bytes.Buffer
	if err := o.render(ctx, &buf, byName); err != nil {
		return err
	}
	if !first && bytes.Equal(buf.Bytes(), o.last) {
		return nil
	}
	o.last = buf.Bytes()
	if !first {
		sep := "\n"
		switch o.Output {
		case "json":
			sep = ""
		case "yaml":
			sep = "---\n"
		}
		fmt.Fprint(o.Out, sep)
	}
	if _, err := o.Out.Write(o.last); err != nil {
		return err
	}
	if len(byName) == 0 && first {
		fmt.Fprintln(o.ErrOut, "No queues found.")
	}
	return nil
}

// render writes the tree to w.
func (o *TreeOptions) render(ctx context.Context, w io.Writer, byName map[string]schedulingv1beta1.Queue) error {
	items := make([]schedulingv1beta1.Queue, 0, len(byName))
	for _, q := range byName {
		items = append(items, q)
	}
	cnt := queueCounts(ctx, o.client, items, countPages(o.chunkFlag, o.ChunkSize))
	f := newForest(items)
	f.sort(func(a, b string) bool { return a < b })
	switch o.Output {
	case "json", "yaml":
		doc := treeDocument(f, cnt)
		var out []byte
		var err error
		if o.Output == "json" {
			out, err = json.MarshalIndent(doc, "", "    ")
			out = append(out, '\n')
		} else {
			out, err = yaml.Marshal(doc)
		}
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	wide := o.Output == "wide"
	header := []string{"QUEUE", "STATE", "WEIGHT", "INQUEUE", "PENDING", "RUNNING", "UNKNOWN", "COMPLETED"}
	if wide {
		header = append(header, "DESERVED", "CAPABILITY", "ALLOCATED")
	}
	var rows [][]string
	f.walk(func(name, label, indent string) {
		q := f.byName[name]
		n := cnt[name]
		row := []string{indent + name + label, string(rules.StateOrOpen(q.Status.State)), itoa(q.Spec.Weight),
			itoa(n.Inqueue), itoa(n.Pending), itoa(n.Running), itoa(n.Unknown), itoa(n.Completed)}
		if wide {
			row = append(row, vcprinters.OrNone(vcprinters.Resources(q.Spec.Deserved)),
				vcprinters.OrNone(vcprinters.Resources(q.Spec.Capability)),
				vcprinters.OrNone(vcprinters.Resources(q.Status.Allocated)))
		}
		rows = append(rows, row)
	})
	return printTable(w, header, rows)
}

// treeNode is one queue of 'queue tree -o json|yaml', with its children
// nested inside it.
type treeNode struct {
	Name string `json:"name"`
	// Parent is the effective parent (root for an empty spec.parent);
	// absent for root.
	Parent string `json:"parent,omitempty"`
	// Problem says why a top-level queue other than root cannot hang under
	// root: `parent "x" missing` or `parent cycle a -> b -> a`.
	Problem    string              `json:"problem,omitempty"`
	State      string              `json:"state"`
	Weight     int32               `json:"weight"`
	PodGroups  treeCounts          `json:"podGroups"`
	Deserved   corev1.ResourceList `json:"deserved,omitempty"`
	Capability corev1.ResourceList `json:"capability,omitempty"`
	Allocated  corev1.ResourceList `json:"allocated,omitempty"`
	Children   []*treeNode         `json:"children"`
}

type treeCounts struct {
	Inqueue   int32 `json:"inqueue"`
	Pending   int32 `json:"pending"`
	Running   int32 `json:"running"`
	Unknown   int32 `json:"unknown"`
	Completed int32 `json:"completed"`
}

// treeDoc is the document of 'queue tree -o json|yaml': the top-level
// queues in the order of the table, root first.
type treeDoc struct {
	Queues []*treeNode `json:"queues"`
}

func treeDocument(f *forest, cnt map[string]counts) treeDoc {
	var node func(name string) *treeNode
	node = func(name string) *treeNode {
		q := f.byName[name]
		n := cnt[name]
		out := &treeNode{
			Name: name, Problem: f.problem[name], State: string(rules.StateOrOpen(q.Status.State)), Weight: q.Spec.Weight,
			PodGroups:  treeCounts{Inqueue: n.Inqueue, Pending: n.Pending, Running: n.Running, Unknown: n.Unknown, Completed: n.Completed},
			Deserved:   q.Spec.Deserved,
			Capability: q.Spec.Capability,
			Allocated:  q.Status.Allocated,
			Children:   []*treeNode{},
		}
		if name != keys.RootQueue {
			out.Parent = rules.EffectiveParent(q)
		}
		for _, k := range f.children[name] {
			out.Children = append(out.Children, node(k))
		}
		return out
	}
	doc := treeDoc{Queues: []*treeNode{}}
	for _, group := range f.tops {
		for _, name := range group {
			doc.Queues = append(doc.Queues, node(name))
		}
	}
	return doc
}

func itoa(i int32) string { return strconv.FormatInt(int64(i), 10) }

// printTable writes header and rows the way kubectl prints tables: no
// borders or lines, the header as given (upper case), every cell left
// aligned and unwrapped, and columns at least two spaces apart. Cells are
// not trimmed, so the tree prefixes of the first column keep their
// leading spaces, and widths are counted per character whatever the
// locale, so the tree glyphs stay aligned. Trailing blanks are dropped.
// A nil header prints the rows alone (--no-headers).
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
	if header != nil {
		table.Header(header)
	}
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
