// Package write is what every command that writes shares: -o for what was
// written (name, json, yaml, …), --dry-run=none|client|server, the
// namespace, the printer and the client, resolved the same way for every
// kind. A kind's command holds Options (or DeleteOptions) as a named field
// (Write, Delete), calls its Complete from its own, and keeps its own
// flags, validation and messages.
package write

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/scheme"
)

// Options is the input every writing command shares.
type Options struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *genericclioptions.PrintFlags
	DryRun     string

	// ClusterScoped kinds read no namespace.
	ClusterScoped bool
	// Offline commands need no cluster for a client dry run (a create
	// that only prints the object): Complete then makes no client.
	Offline bool

	// Set by Complete.
	Namespace string
	// NamespaceGiven says -n was given (not the kubeconfig's default).
	NamespaceGiven       bool
	DryClient, DryServer bool
	Printer              printers.ResourcePrinter
	// Client is nil after Complete for an Offline client dry run.
	Client versioned.Interface
}

// NewOptions returns Options whose printer says operation ("created",
// "updated") after each object written, as kubectl's do.
func NewOptions(f util.Factory, streams genericiooptions.IOStreams, operation string) Options {
	return Options{IOStreams: streams, Factory: f, PrintFlags: NewPrintFlags(operation)}
}

// NewPrintFlags are the -o of a command that writes: its printer says
// operation ("created", "updated") after each object written, as
// kubectl's do.
func NewPrintFlags(operation string) *genericclioptions.PrintFlags {
	return genericclioptions.NewPrintFlags(operation).WithTypeSetter(scheme.Scheme)
}

// AddFlags adds -o and --dry-run.
func (o *Options) AddFlags(cmd *cobra.Command) { AddFlags(cmd, o.PrintFlags, &o.DryRun) }

// AddFlags adds -o (pf's) and --dry-run (into dryRun) to cmd.
func AddFlags(cmd *cobra.Command, pf *genericclioptions.PrintFlags, dryRun *string) {
	pf.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Fixed(pf.AllowedFormats()...))
	util.AddDryRunFlag(cmd, dryRun)
}

// Complete resolves the namespace, the dry-run mode, the printer (which
// says "(dry run)" on a dry run) and the client.
func (o *Options) Complete() error {
	var err error
	if !o.ClusterScoped {
		if o.Namespace, o.NamespaceGiven, err = util.NamespaceGiven(o.Factory); err != nil {
			return err
		}
	}
	if o.Printer, o.DryClient, o.DryServer, err = util.CompleteWrite(o.DryRun, o.PrintFlags); err != nil {
		return err
	}
	if o.Offline && o.DryClient {
		return nil
	}
	o.Client, err = o.Factory.VolcanoClient()
	return err
}

// Dry reports a dry run of either kind: nothing is persisted.
func (o *Options) Dry() bool { return o.DryClient || o.DryServer }

// ServerDryRun is the DryRun field of a request's options.
func (o *Options) ServerDryRun() []string { return util.DryRunOpts(o.DryServer) }

// Suffix is what a dry run adds to "created" or "deleted".
func (o *Options) Suffix() string { return util.DryRunSuffix(o.DryClient, o.DryServer) }

// Print prints what was written as -o asks, the same way on either dry
// run. An object that a client dry run made from generateName has no name
// yet: in the name forms (no -o, -o name) it is shown by its prefix
// (command.bus.volcano.sh/team-a-closequeue-).
func (o *Options) Print(obj runtime.Object) error { return Print(o.Printer, o.PrintFlags, obj, o.Out) }

// Print is Options.Print with printer, made from pf, writing to out.
func Print(printer printers.ResourcePrinter, pf *genericclioptions.PrintFlags, obj runtime.Object, out io.Writer) error {
	if m, err := meta.Accessor(obj); err == nil && m.GetName() == "" && m.GetGenerateName() != "" {
		if f := pf.OutputFormat; f == nil || *f == "" || *f == "name" {
			obj = obj.DeepCopyObject()
			named, _ := meta.Accessor(obj)
			named.SetName(m.GetGenerateName())
		}
	}
	return vcprinters.Print(printer, obj, out)
}
