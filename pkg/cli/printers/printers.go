// Package printers holds the output handling every list-like command shares:
// kubectl-style tables (with -o wide and --no-headers), and the cli-runtime
// printers for json, yaml, name, jsonpath, go-template and custom-columns.
package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/scheme"
)

// PrintFlags extends cli-runtime's PrintFlags with the human-readable
// formats (the default table and wide) and custom-columns, which
// cli-runtime leaves to kubectl itself.
type PrintFlags struct {
	*genericclioptions.PrintFlags
	NoHeaders bool
}

// NewPrintFlags returns print flags whose printers set apiVersion and kind
// from our scheme, since typed clients return objects without them.
func NewPrintFlags() *PrintFlags {
	return &PrintFlags{PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(scheme.Scheme)}
}

// AddFlags registers -o/--output, --no-headers and the template flags.
func (f *PrintFlags) AddFlags(cmd *cobra.Command) {
	f.PrintFlags.AddFlags(cmd)
	// Replace the help text so that it lists the formats this command really has.
	if fl := cmd.Flags().Lookup("output"); fl != nil {
		fl.Usage = "Output format. One of: (" + strings.Join(f.AllowedFormats(), ", ") + ")."
	}
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Fixed(f.AllowedFormats()...))
	cmd.Flags().BoolVar(&f.NoHeaders, "no-headers", false, "When using the default or wide output format, don't print headers")
}

// AllowedFormats lists every -o value the command accepts.
func (f *PrintFlags) AllowedFormats() []string {
	return append([]string{"wide", "custom-columns"}, f.PrintFlags.AllowedFormats()...)
}

// Format returns the -o value.
func (f *PrintFlags) Format() string {
	if f.OutputFormat == nil {
		return ""
	}
	return *f.OutputFormat
}

// HumanReadable reports whether the output is a table (default or wide), so
// that the caller builds rows instead of handing over objects.
func (f *PrintFlags) HumanReadable() bool {
	return f.Format() == "" || f.Format() == "wide"
}

// ToPrinter returns the printer for -o. A table printer expects a
// *metav1.Table (see Table); all others print objects or lists.
func (f *PrintFlags) ToPrinter() (printers.ResourcePrinter, error) {
	format := f.Format()
	switch {
	case f.HumanReadable():
		return printers.NewTablePrinter(printers.PrintOptions{NoHeaders: f.NoHeaders, Wide: format == "wide"}), nil
	case strings.HasPrefix(format, "custom-columns="), format == "custom-columns":
		spec := strings.TrimPrefix(strings.TrimPrefix(format, "custom-columns"), "=")
		p, err := NewCustomColumns(spec, f.NoHeaders)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	p, err := f.PrintFlags.ToPrinter()
	if err != nil {
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return nil, util.UsageErrorf("unknown output format %q: use one of %s", format, strings.Join(f.AllowedFormats(), ", "))
		}
		// Template parse errors and the like: keep only the first line.
		return nil, util.UsageErrorf("invalid output format %q: %s", format, util.Message(err))
	}
	return p, nil
}

// Validate checks -o before anything is read or written.
func (f *PrintFlags) Validate() error {
	_, err := f.ToPrinter()
	return err
}

// Column is one column of a human-readable table. Wide columns only show with -o wide.
type Column struct {
	Name string
	Wide bool
}

// Table builds a metav1.Table for the cli-runtime table printer.
func Table(cols []Column, rows [][]any) *metav1.Table {
	t := &metav1.Table{}
	for _, c := range cols {
		d := metav1.TableColumnDefinition{Name: c.Name, Type: "string"}
		if c.Wide {
			d.Priority = 1
		}
		t.ColumnDefinitions = append(t.ColumnDefinitions, d)
	}
	for _, r := range rows {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: r})
	}
	return t
}

// Age formats the time since t the way kubectl does ("5m", "3d").
func Age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// Resources prints a resource list sorted by name: "cpu=4,memory=8Gi"
// (empty for an empty list).
func Resources(l corev1.ResourceList) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		q := l[corev1.ResourceName(n)]
		parts = append(parts, n+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// OrNone returns s, or "<none>" when it is empty, as kubectl's tables do.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// SetKinds fills apiVersion and kind of each object (typed clients leave
// them empty), so that -o name and -o yaml print them.
func SetKinds(objs ...runtime.Object) {
	for _, o := range objs {
		if gvks, _, err := scheme.Scheme.ObjectKinds(o); err == nil && len(gvks) > 0 {
			o.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
		if meta.IsListType(o) {
			items, err := meta.ExtractList(o)
			if err == nil {
				SetKinds(items...)
				_ = meta.SetList(o, items)
			}
		}
	}
}

// Print prints obj (an object or a list) with p, filling kinds first.
// Typed lists are printed as kubectl prints them, as a "v1 List" of
// objects, which the name printer also accepts.
func Print(p printers.ResourcePrinter, obj runtime.Object, w io.Writer) error {
	SetKinds(obj)
	if meta.IsListType(obj) {
		l, err := toList(obj)
		if err != nil {
			return err
		}
		obj = l
	}
	if err := p.PrintObj(obj, w); err != nil {
		return fmt.Errorf("print: %s", util.Message(err))
	}
	return nil
}

func toList(obj runtime.Object) (*unstructured.UnstructuredList, error) {
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}}
	if la, err := meta.ListAccessor(obj); err == nil && la.GetResourceVersion() != "" {
		out.SetResourceVersion(la.GetResourceVersion())
	}
	for _, it := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(it)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// WriteData writes v as JSON (indented) or YAML when format asks for one,
// and says whether it did; any other format is the caller's.
func WriteData(out io.Writer, format string, v any) bool {
	switch format {
	case "json":
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(out, string(b))
	case "yaml":
		b, _ := yaml.Marshal(v)
		fmt.Fprint(out, string(b))
	default:
		return false
	}
	return true
}

// PodPhase is the pod's phase, or Terminating once it is being deleted, as
// kubectl shows it.
func PodPhase(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	return string(p.Status.Phase)
}
