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
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/manifest"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DeleteOptions is what every delete command shares: the names, --wait
// and --timeout, --dry-run, and -o name, as kubectl delete has them.
type DeleteOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory
	DryRun  string
	// ClusterScoped kinds read no namespace.
	ClusterScoped bool

	Names   []string
	Wait    bool
	Timeout time.Duration
	// Output is "" (ref and "deleted") or "name" (the ref alone).
	Output string
	// Filename, with a file kind (AddFileFlag), names the objects by the
	// file that made them, as kubectl delete -f and vcctl's delete -f do.
	Filename string

	fileKind *schema.GroupVersionKind

	// Set by Complete.
	Namespace string
	// NamespaceGiven says -n was given (not the kubeconfig's default).
	NamespaceGiven       bool
	DryClient, DryServer bool
	Client               versioned.Interface
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
	return DeleteOptions{IOStreams: streams, Factory: f}
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

// Dry reports a dry run of either kind: nothing is deleted.
func (o *DeleteOptions) Dry() bool { return o.DryClient || o.DryServer }

// DeleteOpts are the options of the delete request for an object read
// with uid: it deletes exactly that object (a namesake created since is
// left alone), as a server dry run when asked.
func (o *DeleteOptions) DeleteOpts(uid types.UID) metav1.DeleteOptions {
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: util.DryRunOpts(o.DryServer)}
}

// Deleted prints that ref ("queue.scheduling.volcano.sh/a") was deleted:
// "ref deleted" with the dry run's suffix, or ref alone with -o name.
func (o *DeleteOptions) Deleted(ref string) {
	if o.Output == "name" {
		fmt.Fprintln(o.Out, ref)
		return
	}
	fmt.Fprintf(o.Out, "%s deleted%s\n", ref, util.DryRunSuffix(o.DryClient, o.DryServer))
}

// NewDeleteCmd is k's 'delete NAME... | -f FILE', with k.Help.Delete.
func NewDeleteCmd[T any, PT kind.Object[T], L runtime.Object](k *kind.Kind[T, PT, L], f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &KindDeleteOptions[T, PT, L]{Delete: NewDeleteOptions(f, streams), kind: k}
	cmd := k.Help.Delete.Command("delete NAME... | -f FILE")
	cmd.ValidArgsFunction = k.NameArgs(f)
	cmd.RunE = util.RunE(o)
	o.Delete.AddFlags(cmd, "Wait until the "+k.Plural()+" are gone", "How long --wait waits (0 waits forever)")
	o.Delete.AddFileFlag(cmd, k.GVK)
	util.AddNameFlag(cmd, k.InWords(), false, k.NameFlag(f))
	return cmd
}

// KindDeleteOptions holds the input of the 'delete' of a kind that needs
// no more than its Kind says (jobflow, jobtemplate).
type KindDeleteOptions[T any, PT kind.Object[T], L runtime.Object] struct {
	Delete DeleteOptions
	kind   *kind.Kind[T, PT, L]
}

// Complete records the names (or reads them from -f) and resolves the
// namespace, the dry-run mode and the client.
func (o *KindDeleteOptions[T, PT, L]) Complete(args []string) error { return o.Delete.Complete(args) }

// Validate checks names and flags before any request.
func (o *KindDeleteOptions[T, PT, L]) Validate() error {
	return o.Delete.Validate(o.kind.Name, o.kind.Name+" delete "+o.kind.Example, o.kind.ValidateName)
}

// Run checks that every object named exists, then deletes them.
func (o *KindDeleteOptions[T, PT, L]) Run(ctx context.Context) error {
	return DeleteNamed(ctx, &o.Delete, o.kind, nil)
}

// DeleteNamed is the delete of named objects of kind k that every kind
// shares: each is read first, so that a missing one fails the command
// before anything is deleted; each is then deleted exactly as read (see
// DeleteOpts), as a dry run when asked, and printed; with --wait, the
// command waits until all are gone. explain, when set, says on a timeout
// what the controller reported of an object (see wait.Spec).
func DeleteNamed[T any, PT kind.Object[T], L runtime.Object](ctx context.Context, o *DeleteOptions, k *kind.Kind[T, PT, L],
	explain func(ctx context.Context, name string) string) error {
	c := k.Client(o.Client, o.Namespace)
	found := make([]PT, 0, len(o.Names))
	for _, n := range o.Names {
		obj, err := c.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return k.NotFound(err, n, o.Namespace)
		}
		found = append(found, obj)
	}
	for _, obj := range found {
		if !o.DryClient {
			if err := c.Delete(ctx, obj.GetName(), o.DeleteOpts(obj.GetUID())); err != nil {
				return fmt.Errorf("delete %s %q: %s", k.Name, obj.GetName(), util.Message(err))
			}
		}
		o.Deleted(k.Ref(obj.GetName()))
	}
	if !o.Wait {
		return nil
	}
	spec := wait.SpecOf(k, o.Client, o.Namespace, o.Names, o.Timeout)
	spec.Explain = explain
	return wait.Deleted[PT](ctx, spec, "finalizers may hold them")
}
