package printers

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/event"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/spf13/cobra"
)

// WriteEvents prints the events of one object the way kubectl describe
// does (describeEvents): sorted by kubectl's event ordering, and repeated
// events folded into one line with their count and span ("3m (x12 over
// 10m)"), whether the repetition was recorded as
// count/firstTimestamp/lastTimestamp or as an events.k8s.io series.
// Events are found by kind and name (in namespace, or in every namespace
// for cluster-scoped objects), then narrowed to uid so that events of an
// earlier object with the same name are left out. A failure to list is
// reported in place: describe should still show the rest.
func WriteEvents(ctx context.Context, w io.Writer, kc kubernetes.Interface, namespace, kind, name string, uid types.UID) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.AsSelector().String()
	evs, err := kc.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		fmt.Fprintf(w, "Events:\t<cannot list: %s>\n", util.Message(err))
		return
	}
	mine := &corev1.EventList{}
	for _, e := range evs.Items {
		if e.InvolvedObject.UID == "" || e.InvolvedObject.UID == uid {
			mine.Items = append(mine.Items, e)
		}
	}
	describeEvents(mine, &prefixWriter{out: w})
}

// describeEvents writes el as kubectl's describe.DescribeEvents does, line
// for line (TestDescribeEventsAsKubectl compares the two). It and
// prefixWriter stand in for k8s.io/kubectl/pkg/describe, which the binary
// linked for nothing else: that package brings kubectl's describers of
// every Kubernetes kind and k8s.io/kubectl/pkg/scheme, a second scheme of
// every API group registered at init, which cost every command about
// 0.9 ms and 0.5 MB of allocations before main, 'version --client'
// included (GODEBUG=inittrace=1).
func describeEvents(el *corev1.EventList, w *prefixWriter) {
	if len(el.Items) == 0 {
		w.Write(0, "Events:\t<none>\n")
		return
	}
	w.Flush()
	sort.Sort(event.SortableEvents(el.Items))
	w.Write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
	w.Write(1, "----\t------\t----\t----\t-------\n")
	for _, e := range el.Items {
		first := since(e.EventTime.Time)
		if e.EventTime.IsZero() {
			first = since(e.FirstTimestamp.Time)
		}
		interval := first
		switch {
		case e.Series != nil:
			interval = fmt.Sprintf("%s (x%d over %s)", since(e.Series.LastObservedTime.Time), e.Series.Count, first)
		case e.Count > 1:
			interval = fmt.Sprintf("%s (x%d over %s)", since(e.LastTimestamp.Time), e.Count, first)
		}
		source := e.Source.Component
		if source == "" {
			source = e.ReportingController
		}
		message := strings.TrimSpace(e.Message)
		if e.InvolvedObject.FieldPath != "" {
			message = e.InvolvedObject.FieldPath + ": " + message
		}
		w.Write(1, "%v\t%v\t%s\t%v\t%v\n", e.Type, e.Reason, interval, source, message)
	}
}

// since is how long ago t was, as kubectl describe says it, or <unknown>.
func since(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t))
}

// prefixWriter is kubectl describe's PrefixWriter: each level indents two
// spaces more, and what is written is escaped as kubectl escapes it
// (terminal control sequences made harmless).
type prefixWriter struct {
	out io.Writer
}

// Write writes format with a at level.
func (pw *prefixWriter) Write(level int, format string, a ...any) {
	printers.WriteEscaped(pw.out, fmt.Sprintf(strings.Repeat("  ", level)+format, a...))
}

// Flush flushes the writer underneath when it has a Flush without result,
// as kubectl's does.
func (pw *prefixWriter) Flush() {
	if f, ok := pw.out.(interface{ Flush() }); ok {
		f.Flush()
	}
}

// MapString prints labels or annotations as k=v,k=v sorted, or <none>.
func MapString(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// Describer writes a describe page the way kubectl does: "Label:\tvalue"
// lines, each level indented two more spaces (kubectl's
// describe.PrefixWriter: Write), aligned by one tabwriter. Flush when done.
type Describer struct {
	prefixWriter
	tw *tabwriter.Writer
}

// NewDescriber returns a Describer writing to out.
func NewDescriber(out io.Writer) *Describer {
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	return &Describer{prefixWriter: prefixWriter{out: tw}, tw: tw}
}

// Flush writes out what the tabwriter holds.
func (d *Describer) Flush() { _ = d.tw.Flush() }

// Line writes "label:\tvalue" at level.
func (d *Describer) Line(level int, label string, value any) {
	d.Write(level, "%s:\t%v\n", label, value)
}

// Section starts a section: "title:" at level, its lines one level deeper.
func (d *Describer) Section(level int, title string) {
	d.Write(level, "%s:\n", title)
}

// CannotList says in place that what label shows could not be listed:
// describe still shows the rest.
func (d *Describer) CannotList(level int, label string, err error) {
	d.Line(level, label, "<cannot list: "+util.Message(err)+">")
}

// Header writes what every describe page starts with: Name, Namespace
// (for a namespaced object), Labels, Annotations and Created.
func (d *Describer) Header(obj metav1.Object) {
	d.Line(0, "Name", obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		d.Line(0, "Namespace", ns)
	}
	d.Line(0, "Labels", MapString(obj.GetLabels()))
	d.Line(0, "Annotations", MapString(obj.GetAnnotations()))
	created := obj.GetCreationTimestamp()
	d.Line(0, "Created", created.Format("2006-01-02T15:04:05Z07:00")+" ("+Age(created)+" ago)")
}

// Table writes rows (tab-separated cells) as a section at level, under
// header when there is one, or "label:\t<none>" when there are no rows.
func (d *Describer) Table(level int, label, header string, rows []string) {
	if len(rows) == 0 {
		d.Line(level, label, "<none>")
		return
	}
	d.Section(level, label)
	if header != "" {
		d.Write(level+1, "%s\n", header)
	}
	for _, r := range rows {
		d.Write(level+1, "%s\n", r)
	}
}

// Events writes the events of obj (see WriteEvents); namespace is where
// to look, empty for every namespace.
func (d *Describer) Events(ctx context.Context, kc kubernetes.Interface, namespace, kind string, obj metav1.Object) {
	WriteEvents(ctx, d.tw, kc, namespace, kind, obj.GetName(), obj.GetUID())
}

// DescribeOptions is the input every 'describe NAME' shares; a kind's
// DescribeOptions holds it as its Describe field and adds its Validate and Run.
type DescribeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Name      string
	Namespace string

	// ClusterScoped kinds read no namespace.
	ClusterScoped bool
	// NoName is the usage error when no name is given.
	NoName string
	// Output, set by AddOutputFlag, prints the object itself as json or
	// yaml instead of the description (vcctl's 'describe -o').
	Output string

	// Client and Kube are set by Complete.
	Client versioned.Interface
	Kube   kubernetes.Interface
}

// Complete records the name and resolves the namespace and the clients
// (Volcano's for the object, Kubernetes' for its pods and events).
func (o *DescribeOptions) Complete(args []string) error {
	if len(args) == 0 {
		return util.UsageErrorf("%s", o.NoName)
	}
	o.Name = args[0]
	var err error
	if !o.ClusterScoped {
		if o.Namespace, err = util.Namespace(o.Factory); err != nil {
			return err
		}
	}
	o.Client, o.Kube, err = util.Clients(o.Factory)
	return err
}

// AddOutputFlag adds -o json|yaml, for the kinds whose vcctl describe
// takes it: the object as it is, instead of the description.
func (o *DescribeOptions) AddOutputFlag(cmd *cobra.Command) {
	util.AddOutputFlag(cmd, &o.Output, "json", "yaml")
}

// PrintObject prints obj as -o asks and reports true; with no -o it
// prints nothing and reports false: the caller describes.
func (o *DescribeOptions) PrintObject(obj runtime.Object) (bool, error) {
	var p printers.ResourcePrinter
	switch o.Output {
	case "":
		return false, nil
	case "json":
		p = &printers.JSONPrinter{}
	case "yaml":
		p = &printers.YAMLPrinter{}
	default:
		return true, util.ValidateOutput(o.Output, "json", "yaml")
	}
	return true, Print(p, obj, o.Out)
}
