package jobtemplate

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/wait"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DeleteOptions holds the input of 'jobtemplate delete'.
type DeleteOptions struct {
	write.DeleteOptions
	name string
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{DeleteOptions: write.NewDeleteOptions(f, streams)}
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete job templates",
		Long: templates.LongDesc(`
			Delete JobTemplates. Every template is looked up first, so a missing one fails
			the command before anything is deleted. Jobs already made from a template are
			left alone (they belong to their JobFlow); a JobFlow step that names a deleted
			template gets no job until the template is back. With --wait, wait until the
			templates are gone.`),
		Example: templates.Examples(`
			# Delete a template
			kubectl vc jobtemplate delete preprocess

			# As vcctl names it, waiting until it is gone
			kubectl vc jobtemplate delete -N preprocess -n research --wait`),
		ValidArgsFunction: Kind.Names(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			return util.RunE(o)(cmd, WithName(args, o.name))
		},
	}
	o.AddFlags(cmd, "Wait until the job templates are gone", "How long --wait waits (0 waits forever)")
	AddNameFlag(cmd, &o.name, "job template")
	_ = cmd.RegisterFlagCompletionFunc("name", Kind.Flag(f))
	return cmd
}

// Validate checks names and flags before any request.
func (o *DeleteOptions) Validate() error {
	return o.DeleteOptions.Validate("jobtemplate", "jobtemplate delete preprocess", ValidateName)
}

// Run checks that every template exists, then deletes them.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c := o.Client.FlowV1alpha1().JobTemplates(o.Namespace)
	var found []*flowv1alpha1.JobTemplate
	for _, n := range o.Names {
		t, err := c.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return NotFound(err, "jobtemplate", n, o.Namespace)
		}
		found = append(found, t)
	}
	for _, t := range found {
		if !o.DryClient {
			if err := c.Delete(ctx, t.Name, o.DeleteOpts(t.UID)); err != nil {
				return fmt.Errorf("delete jobtemplate %q: %s", t.Name, util.Message(err))
			}
		}
		o.Deleted(Ref(t.Name))
	}
	if o.Wait {
		return wait.Deleted[*flowv1alpha1.JobTemplate](ctx, templateWait(o.Client, o.Namespace, o.Names, o.Timeout), "finalizers may hold them")
	}
	return nil
}

// templateWait is a wait on the named templates of namespace ns.
func templateWait(c versioned.Interface, ns string, names []string, timeout time.Duration) wait.Spec {
	ts := c.FlowV1alpha1().JobTemplates(ns)
	return wait.Spec{Kind: "jobtemplate", Namespace: ns, Names: names, Timeout: timeout, ListWatch: wait.ListWatch(names, ts.List, ts.Watch)}
}
