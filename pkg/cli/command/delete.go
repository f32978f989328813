package command

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// DeleteOptions holds the input of 'command delete'.
type DeleteOptions struct {
	Delete write.DeleteOptions
	// All deletes every Command of the namespace (every namespace with
	// AllNamespaces), or only those for Queue or Job.
	All           bool
	AllNamespaces bool
	Queue         string
	Job           string
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{Delete: write.NewDeleteOptions(f, streams)}
	cmd := &cobra.Command{
		Use:   "delete (NAME... | --all [--queue QUEUE | --job JOB])",
		Short: "Delete Commands that no controller will apply",
		Long: templates.LongDesc(`
			Delete pending Commands: the named ones, or with --all every Command of the
			namespace (-n; every namespace with -A), or only those for one queue (--queue)
			or one Volcano Job (--job). A Command a controller would still apply is gone
			for good: delete only what is stuck ('kubectl vc command list -A -o wide' and
			'kubectl vc doctor' say which, and why). Every named Command is looked up
			first, so a missing one fails the command before anything is deleted.`),
		Example: templates.Examples(`
			# Delete one Command
			kubectl vc command delete dev-openqueue-8jhw5 -n default

			# Delete every Command for queue dev, in every namespace
			kubectl vc command delete --all --queue dev -A

			# Delete the Commands of job train (they live in its namespace)
			kubectl vc command delete --all --job train -n research

			# Show what would be deleted
			kubectl vc command delete --all -n default --dry-run=client`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.Delete.AddFlags(cmd, "Wait until the Commands are gone", "How long --wait waits (0 waits forever)")
	cmd.Flags().BoolVar(&o.All, "all", false, "Delete every Command of the namespace, or of --queue or --job")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "With --all: in every namespace")
	cmd.Flags().StringVar(&o.Queue, "queue", "", "With --all: only the Commands for this queue")
	cmd.Flags().StringVar(&o.Job, "job", "", "With --all: only the Commands for this Volcano Job (of the namespace)")
	_ = cmd.RegisterFlagCompletionFunc("queue", completion.Queues.Flag(f))
	_ = cmd.RegisterFlagCompletionFunc("job", completion.Jobs.Flag(f))
	return cmd
}

// Complete records the names and resolves the namespace, the dry-run
// mode and the client, as every delete does (write.DeleteOptions).
func (o *DeleteOptions) Complete(args []string) error { return o.Delete.Complete(args) }

// Validate checks names and flags before any request.
func (o *DeleteOptions) Validate() error {
	switch {
	case o.All && len(o.Delete.Names) > 0:
		return util.UsageErrorf("give Command names or --all, not both")
	case !o.All && (o.Queue != "" || o.Job != ""):
		return util.UsageErrorf("--queue and --job pick Commands for --all: add --all, e.g. 'kubectl vc command delete --all --queue dev'")
	case !o.All && o.AllNamespaces:
		return util.UsageErrorf("-A goes with --all: named Commands are deleted from one namespace (-n)")
	case o.Queue != "" && o.Job != "":
		return util.UsageErrorf("give --queue or --job, not both")
	case o.AllNamespaces && o.Delete.NamespaceGiven:
		return util.UsageErrorf("give -n or -A, not both")
	}
	if o.Queue != "" {
		if errs := validation.IsDNS1123Label(o.Queue); len(errs) > 0 {
			return util.UsageErrorf("invalid --queue %q: %s", o.Queue, errs[0])
		}
	}
	if o.Job != "" {
		if errs := validation.IsDNS1123Label(o.Job); len(errs) > 0 {
			return util.UsageErrorf("invalid --job %q: %s", o.Job, errs[0])
		}
	}
	if o.All {
		return util.ValidateWait(o.Delete.Timeout, o.Delete.Wait, o.Delete.Dry(), "nothing would be deleted")
	}
	return o.Delete.Validate("Command", "command delete dev-openqueue-8jhw5 -n default (or --all)", Kind.ValidateName)
}

// Run finds the Commands (all of them before the first delete) and deletes
// each exactly as read (UID precondition), then waits if asked.
func (o *DeleteOptions) Run(ctx context.Context) error {
	targets, err := o.find(ctx)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fmt.Fprintln(o.Delete.ErrOut, o.noneFound())
		return nil
	}
	byNamespace := map[string][]string{}
	for _, c := range targets {
		if !o.Delete.DryClient {
			err := o.Delete.Client.BusV1alpha1().Commands(c.Namespace).Delete(ctx, c.Name, o.Delete.DeleteOpts(c.UID))
			if err != nil {
				return fmt.Errorf("delete Command %s/%s: %s", c.Namespace, c.Name, util.Message(err))
			}
		}
		o.Delete.Deleted("command.bus.volcano.sh/" + c.Name)
		byNamespace[c.Namespace] = append(byNamespace[c.Namespace], c.Name)
	}
	if !o.Delete.Wait {
		return nil
	}
	namespaces := make([]string, 0, len(byNamespace))
	for ns := range byNamespace {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		s := wait.SpecOf(Kind, o.Delete.Client, ns, byNamespace[ns], o.Delete.Timeout)
		if err := wait.Deleted[*busv1alpha1.Command](ctx, s, "finalizers may hold them"); err != nil {
			return err
		}
	}
	return nil
}

// find returns the Commands to delete: the named ones (each must exist),
// or those --all picks, oldest first.
func (o *DeleteOptions) find(ctx context.Context) ([]busv1alpha1.Command, error) {
	if !o.All {
		out := make([]busv1alpha1.Command, 0, len(o.Delete.Names))
		for _, n := range o.Delete.Names {
			c, err := o.Delete.Client.BusV1alpha1().Commands(o.Delete.Namespace).Get(ctx, n, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil, util.UsageErrorf("Command %q not found in namespace %s: nothing was deleted (see 'kubectl vc command list -n %s')", n, o.Delete.Namespace, o.Delete.Namespace)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, *c)
		}
		return out, nil
	}
	ns := o.Delete.Namespace
	if o.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	items, _, err := chunk.List[busv1alpha1.Command](ctx, 0, metav1.ListOptions{}, o.Delete.Client.BusV1alpha1().Commands(ns).List)
	if err != nil {
		return nil, err
	}
	var out []busv1alpha1.Command
	for _, c := range items {
		if o.picks(&c) {
			out = append(out, c)
		}
	}
	// Creation order: a Command's resourceVersion is that of its creation
	// (Commands are not updated), exact within a second, where
	// creationTimestamp ties.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if cmp, err := resourceversion.CompareResourceVersion(a.ResourceVersion, b.ResourceVersion); err == nil && cmp != 0 {
			return cmp < 0
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
	return out, nil
}

// picks tells whether --all with --queue or --job takes the Command.
func (o *DeleteOptions) picks(c *busv1alpha1.Command) bool {
	t := c.TargetObject
	switch {
	case o.Queue != "":
		return t != nil && t.Kind == "Queue" && t.APIVersion == schedulingv1beta1.SchemeGroupVersion.String() && t.Name == o.Queue
	case o.Job != "":
		return t != nil && t.Kind == "Job" && t.APIVersion == batchv1alpha1.SchemeGroupVersion.String() && t.Name == o.Job
	}
	return true
}

// noneFound says that --all found nothing, and where it looked.
func (o *DeleteOptions) noneFound() string {
	what := "No pending Commands"
	switch {
	case o.Queue != "":
		what += " for queue " + o.Queue
	case o.Job != "":
		what += " for job " + o.Job
	}
	if o.AllNamespaces {
		return what + " found."
	}
	return fmt.Sprintf("%s found in %s namespace.", what, o.Delete.Namespace)
}
