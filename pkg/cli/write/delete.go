package write

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/manifest"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
)

// DeleteOptions is what every delete command shares: the names, --wait
// and --timeout, --dry-run, and -o name, as kubectl delete has them.
type DeleteOptions struct {
	Options
	Names   []string
	Wait    bool
	Timeout time.Duration
	// Output is "" (ref and "deleted") or "name" (the ref alone).
	Output string
	// Filename, with a file kind (AddFileFlag), names the objects by the
	// file that made them, as kubectl delete -f and vcctl's delete -f do.
	Filename string

	fileKind *schema.GroupVersionKind
}

// AddFileFlag adds -f/--filename (and vcctl's --file, the same flag): the
// objects of kind gvk that a file holds, instead of names.
func (o *DeleteOptions) AddFileFlag(cmd *cobra.Command, gvk schema.GroupVersionKind) {
	o.fileKind = &gvk
	help := fmt.Sprintf("Delete the %ss a file holds (YAML or JSON, several separated by ---; - reads standard input)", gvk.Kind)
	cmd.Flags().StringVarP(&o.Filename, "filename", "f", "", help)
	cmd.Flags().StringVar(&o.Filename, "file", "", help+" (vcctl's name for -f)")
	_ = cmd.Flags().MarkHidden("file")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// namesFromFile takes the names, and the namespace, from the file: every
// document must be of the command's kind, in one namespace, which is -n's
// when -n is given.
func (o *DeleteOptions) namesFromFile() error {
	if len(o.Names) > 0 {
		return util.UsageErrorf("give names or -f FILE, not both")
	}
	docs, err := manifest.Read(o.In, o.Filename)
	if err != nil {
		return err
	}
	ns := ""
	for i, doc := range docs {
		where := manifest.Where(o.Filename, i, len(docs))
		docNS, name, err := manifest.Named(where, doc, *o.fileKind)
		if err != nil {
			return err
		}
		switch {
		case docNS == "":
			docNS = o.Namespace
		case o.NamespaceGiven && docNS != o.Namespace:
			return util.UsageErrorf("the %s in %s is in namespace %q, not %q (-n): drop -n or change the file", strings.ToLower(o.fileKind.Kind), where, docNS, o.Namespace)
		}
		if ns != "" && docNS != ns {
			return util.UsageErrorf("%s is in namespace %q, the objects before it in %q: delete -f takes one namespace at a time", where, docNS, ns)
		}
		ns = docNS
		o.Names = append(o.Names, name)
	}
	o.Namespace = ns
	return nil
}

// NewDeleteOptions returns DeleteOptions over f and streams.
func NewDeleteOptions(f util.Factory, streams genericiooptions.IOStreams) DeleteOptions {
	return DeleteOptions{Options: NewOptions(f, streams, "deleted")}
}

// AddFlags adds --wait (waitHelp says what it waits for), --timeout
// (timeoutHelp, or the default help), --dry-run and -o.
func (o *DeleteOptions) AddFlags(cmd *cobra.Command, waitHelp, timeoutHelp string) {
	util.AddWaitFlags(cmd, &o.Wait, &o.Timeout, waitHelp, timeoutHelp)
	util.AddDryRunFlag(cmd, &o.DryRun)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", `Output format: "name" prints only kind.group/name of each object deleted`)
	_ = cmd.RegisterFlagCompletionFunc("output", completion.Fixed("name"))
}

// Complete records the names and resolves the namespace, the dry-run mode
// and the client (a client dry run still looks the objects up).
func (o *DeleteOptions) Complete(args []string) error {
	o.Names = args
	if o.Output != "" && o.Output != "name" {
		return util.UsageErrorf("unknown output format %q: delete prints only -o name", o.Output)
	}
	var err error
	if !o.ClusterScoped {
		if o.Namespace, o.NamespaceGiven, err = util.NamespaceGiven(o.Factory); err != nil {
			return err
		}
	}
	if o.DryClient, o.DryServer, err = util.DryRunStrategy(o.DryRun); err != nil {
		return err
	}
	if o.Filename != "" {
		if err := o.namesFromFile(); err != nil {
			return err
		}
	}
	o.Client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks what every delete checks, before any request: at least
// one name (example shows one: 'queue delete team-a'), each valid and
// given once (validate), --timeout, and no --wait on a dry run.
func (o *DeleteOptions) Validate(kind, example string, validate func(string) error) error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the %s(s) to delete, e.g. 'kubectl vc %s'", kind, example)
	}
	if err := util.ValidateNames(kind, o.Names, validate); err != nil {
		return err
	}
	return util.ValidateWait(o.Timeout, o.Wait, o.Dry(), "nothing would be deleted")
}

// DeleteOpts are the options of the delete request for an object read
// with uid: it deletes exactly that object (a namesake created since is
// left alone), as a server dry run when asked.
func (o *DeleteOptions) DeleteOpts(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: o.ServerDryRun()}
}

// Deleted prints that ref ("queue.scheduling.volcano.sh/a") was deleted:
// "ref deleted" with the dry run's suffix, or ref alone with -o name.
func (o *DeleteOptions) Deleted(ref string) {
	if o.Output == "name" {
		fmt.Fprintln(o.Out, ref)
		return
	}
	fmt.Fprintf(o.Out, "%s deleted%s\n", ref, o.Suffix())
}

// Deletable is how DeleteNamed reads, deletes and watches one kind,
// through its typed client (c.FlowV1alpha1().JobFlows(ns).Get, ...).
type Deletable[PT wait.Object, L runtime.Object] struct {
	// Kind names the objects in messages ("jobflow").
	Kind string
	// Ref names one as kubectl prints it ("jobflow.flow.volcano.sh/x").
	Ref func(name string) string

	Get    func(ctx context.Context, name string, opts metav1.GetOptions) (PT, error)
	Delete func(ctx context.Context, name string, opts metav1.DeleteOptions) error
	List   func(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch  func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

	// NotFound turns a Get's error into the command's (nil: the kind and
	// name not found in the namespace, see util.InNamespace).
	NotFound func(err error, name string) error
	// Hint says what may hold an object --wait still finds; Explain, when
	// set, what its controller reported (see wait.Spec).
	Hint    string
	Explain func(ctx context.Context, name string) string
}

// DeleteNamed is the delete of named objects every kind shares: each is
// read first, so that a missing one fails the command before anything is
// deleted; each is then deleted exactly as read (see DeleteOpts), as a dry
// run when asked, and printed; with --wait, the command waits until all
// are gone.
func DeleteNamed[PT wait.Object, L runtime.Object](ctx context.Context, o *DeleteOptions, k Deletable[PT, L]) error {
	found := make([]PT, 0, len(o.Names))
	for _, n := range o.Names {
		obj, err := k.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			if k.NotFound != nil {
				return k.NotFound(err, n)
			}
			return util.InNamespace(err, o.Namespace)
		}
		found = append(found, obj)
	}
	for _, obj := range found {
		if !o.DryClient {
			if err := k.Delete(ctx, obj.GetName(), o.DeleteOpts(obj.GetUID())); err != nil {
				return fmt.Errorf("delete %s %q: %s", k.Kind, obj.GetName(), util.Message(err))
			}
		}
		o.Deleted(k.Ref(obj.GetName()))
	}
	if !o.Wait {
		return nil
	}
	spec := wait.Spec{Kind: k.Kind, Namespace: o.Namespace, Names: o.Names, Timeout: o.Timeout,
		ListWatch: wait.ListWatch(o.Names, k.List, k.Watch), Explain: k.Explain}
	return wait.Deleted[PT](ctx, spec, k.Hint)
}
