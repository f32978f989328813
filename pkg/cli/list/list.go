// Package list is what every 'list' command shares: the flags (-o, -l,
// -A, -w, --chunk-size), resolving names, namespace, printer and client,
// and checking the flags every kind checks alike. A kind's package keeps
// its columns, its filters and its messages.
package list

import (
	"context"
	"fmt"

	"github.com/liggitt/tabwriter"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/follow"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Options is the input every list command shares; a kind's ListOptions
// holds it as its field List and calls its Complete and Validate from its
// own, so that the verb reads top to bottom in the kind's file.
type Options struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *vcprinters.PrintFlags

	Names         []string
	Namespace     string
	AllNamespaces bool
	Selector      string
	Watch         bool
	ChunkSize     int64

	// Printer and Client are set by Complete.
	Printer printers.ResourcePrinter
	Client  versioned.Interface

	// ClusterScoped kinds read no namespace; their -A does nothing.
	ClusterScoped bool

	tw *tabwriter.Writer

	// kind and validateName check the names given (see Named).
	kind         string
	validateName func(string) error
}

// NewOptions returns Options over f and streams with kubectl-vc's printers.
func NewOptions(f util.Factory, streams genericiooptions.IOStreams) Options {
	return Options{IOStreams: streams, Factory: f, PrintFlags: vcprinters.NewPrintFlags()}
}

// Named is o for a kind whose objects can be named on the command line:
// Validate then checks the names (see ValidateNames) with validate.
func (o Options) Named(kind string, validate func(string) error) Options {
	o.kind, o.validateName = kind, validate
	return o
}

// Flags says which of the shared flags a list command has, and their help.
type Flags struct {
	// AllNamespaces is the help of -A (a ClusterScoped kind's -A is
	// accepted and ignored).
	AllNamespaces string
	// Selector is the help of -l.
	Selector string
	// Watch adds -w.
	Watch bool
}

// AddFlags adds -o and the flags fl names to cmd.
func (o *Options) AddFlags(cmd *cobra.Command, fl Flags) {
	o.PrintFlags.AddFlags(cmd)
	help := fl.AllNamespaces
	if o.ClusterScoped {
		// kubectl accepts -A for cluster-scoped kinds too and ignores it;
		// so do we, so that 'kubectl get -A' habits keep working.
		help = "Accepted and ignored: this kind is cluster-scoped"
	}
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, help)
	cmd.Flags().StringVarP(&o.Selector, "selector", "l", "", fl.Selector)
	if fl.Watch {
		cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing, watch for changes")
	}
	chunk.AddFlag(cmd, &o.ChunkSize)
}

// Complete records the names and resolves the namespace (all of them with
// -A), the printer and the client.
func (o *Options) Complete(args []string) error {
	o.Names = args
	var err error
	if !o.ClusterScoped {
		if o.Namespace, err = util.ListNamespace(o.Factory, o.AllNamespaces); err != nil {
			return err
		}
	}
	if o.Printer, err = o.PrintFlags.ToPrinter(); err != nil {
		return err
	}
	o.Client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks --chunk-size, --selector and, for a Named kind, the
// names given.
func (o *Options) Validate() error {
	if err := chunk.Validate(o.ChunkSize); err != nil {
		return err
	}
	if _, err := labels.Parse(o.Selector); err != nil {
		return util.UsageErrorf("invalid --selector %q: %s", o.Selector, util.Message(err))
	}
	if o.validateName != nil {
		return o.ValidateNames(o.kind, o.validateName)
	}
	return nil
}

// Print prints obj (a list or one object of a watch) as -o asks. A table
// is built by table, from n items; when there are none, and no --watch,
// stderr says none instead, as kubectl does.
func (o *Options) Print(obj runtime.Object, n int, none string, table func() runtime.Object) error {
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.Printer, obj, o.Out)
	}
	if n == 0 {
		if !o.Watch {
			fmt.Fprintln(o.ErrOut, none)
		}
		return nil
	}
	return o.printRows(obj, table)
}

// printRows prints obj, or the table built by table when the output is
// human-readable, and flushes it.
func (o *Options) printRows(obj runtime.Object, table func() runtime.Object) error {
	if !o.PrintFlags.HumanReadable() {
		return vcprinters.Print(o.Printer, obj, o.Out)
	}
	// One tab writer for the list (each of its pages, when streamed) and
	// every watched row after it: it remembers the columns' widths, so
	// that rows line up with the header as kubectl's do, and is flushed
	// after each print. A later page or row with a wider cell widens its
	// column from there on, as 'kubectl get --watch' rows do.
	if o.tw == nil {
		o.tw = printers.GetNewTabWriter(o.Out)
	}
	if err := o.Printer.PrintObj(table(), o.tw); err != nil {
		return err
	}
	return o.tw.Flush()
}

// NoneFound says nothing was found ("No jobs found"), in which namespace
// unless -A: "No jobs found in ns namespace.".
func (o *Options) NoneFound(what string) string {
	if o.AllNamespaces || o.ClusterScoped {
		return what + "."
	}
	return fmt.Sprintf("%s in %s namespace.", what, o.Namespace)
}

// Read reads what the command lists, --chunk-size at a time (see
// chunk.Read): the named objects, or every one -l selects. A name not
// found fails the command: "job \"x\" not found in namespace \"ns\"".
func Read[T any, PT chunk.Object[T], L runtime.Object](ctx context.Context, o *Options, kind string,
	get chunk.GetFunc[PT], list chunk.ListFunc[L]) ([]T, string, error) {
	return chunk.Read[T](ctx, o.Names, o.Watch, o.ChunkSize, metav1.ListOptions{LabelSelector: o.Selector}, get, list,
		func(n string) error {
			if o.ClusterScoped {
				return util.UsageErrorf("%s %q not found", kind, n)
			}
			return util.UsageErrorf("%s %q not found in namespace %q", kind, n, o.Namespace)
		})
}

// Keep keeps, in place, the items keep accepts: the filters the API
// server cannot apply (spec and status fields of custom resources are not
// selectable).
func Keep[T any](items []T, keep func(*T) bool) []T {
	kept := items[:0]
	for i := range items {
		if keep(&items[i]) {
			kept = append(kept, items[i])
		}
	}
	return kept
}

// Object is one object of a kind's list, as a pointer (*batchv1alpha1.Job).
type Object interface {
	runtime.Object
	metav1.Object
}

// Follow is what --watch does once the list is printed: from the list's
// resourceVersion rv, it prints every later change of the objects named
// (all with no names) that keep accepts (nil keeps all). Without --watch
// it does nothing.
func Follow[P Object](ctx context.Context, o *Options, rv string, watchFn follow.WatchFunc, keep func(P) bool, print func(P) error) error {
	if !o.Watch {
		return nil
	}
	named := follow.Only(o.Names)
	return follow.Each(ctx, rv, metav1.ListOptions{LabelSelector: o.Selector}, watchFn,
		func(_ watch.EventType, obj P) error {
			if !named(obj.GetName()) || (keep != nil && !keep(obj)) {
				return nil
			}
			return print(obj)
		})
}
