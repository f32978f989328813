package jobtemplate

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// DeleteOptions holds the input of 'jobtemplate delete'.
type DeleteOptions struct {
	write.DeleteOptions
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{DeleteOptions: write.NewDeleteOptions(f, streams)}
	cmd := &cobra.Command{
		Use:   "delete NAME... | -f FILE",
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

			# The templates a file created, as kubectl delete -f and vcctl's delete -f
			kubectl vc jobtemplate delete -f templates.yaml

			# As vcctl names it, waiting until it is gone
			kubectl vc jobtemplate delete -N preprocess -n research --wait`),
		ValidArgsFunction: Kind.Names(f),
		RunE:              util.RunE(o),
	}
	o.AddFlags(cmd, "Wait until the job templates are gone", "How long --wait waits (0 waits forever)")
	o.AddFileFlag(cmd, flowv1alpha1.SchemeGroupVersion.WithKind("JobTemplate"))
	util.AddNameFlag(cmd, "job template", false, Kind.Flag(f))
	return cmd
}

// Validate checks names and flags before any request.
func (o *DeleteOptions) Validate() error {
	return o.DeleteOptions.Validate("jobtemplate", "jobtemplate delete preprocess", ValidateName)
}

// Run checks that every jobtemplate exists, then deletes them.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c := o.Client.FlowV1alpha1().JobTemplates(o.Namespace)
	return write.DeleteNamed(ctx, &o.DeleteOptions, write.Deletable[*flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplateList]{
		Kind: "jobtemplate", Ref: Ref, Get: c.Get, Delete: c.Delete, List: c.List, Watch: c.Watch,
		NotFound: func(err error, name string) error { return NotFound(err, "jobtemplate", name, o.Namespace) },
		Hint:     "finalizers may hold them",
	})
}
