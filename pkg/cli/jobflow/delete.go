package jobflow

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobtemplate"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// DeleteOptions holds the input of 'jobflow delete'.
type DeleteOptions struct {
	write.DeleteOptions
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{DeleteOptions: write.NewDeleteOptions(f, streams)}
	cmd := &cobra.Command{
		Use:   "delete NAME... | -f FILE",
		Short: "Delete job flows",
		Long: templates.LongDesc(`
			Delete JobFlows. Every flow is looked up first, so a missing one fails the
			command before anything is deleted. The Volcano Jobs made for the flow's steps
			are owned by it and removed after it by the garbage collector; its JobTemplates
			stay. With --wait, wait until the flows are gone.`),
		Example: templates.Examples(`
			# Delete a flow (and, through the garbage collector, its jobs)
			kubectl vc jobflow delete pipeline

			# The flows a file created, as kubectl delete -f and vcctl's delete -f
			kubectl vc jobflow delete -f pipeline.yaml

			# As vcctl names it, waiting until it is gone
			kubectl vc jobflow delete -N pipeline -n research --wait`),
		ValidArgsFunction: Kind.Names(f),
		RunE:              util.RunE(o),
	}
	o.AddFlags(cmd, "Wait until the job flows are gone", "How long --wait waits (0 waits forever)")
	o.AddFileFlag(cmd, flowv1alpha1.SchemeGroupVersion.WithKind("JobFlow"))
	util.AddNameFlag(cmd, "job flow", false, Kind.Flag(f))
	return cmd
}

// Validate checks names and flags before any request.
func (o *DeleteOptions) Validate() error {
	return o.DeleteOptions.Validate("jobflow", "jobflow delete pipeline", validateName)
}

// Run checks that every jobflow exists, then deletes them.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c := o.Client.FlowV1alpha1().JobFlows(o.Namespace)
	return write.DeleteNamed(ctx, &o.DeleteOptions, write.Deletable[*flowv1alpha1.JobFlow, *flowv1alpha1.JobFlowList]{
		Kind: "jobflow", Ref: Ref, Get: c.Get, Delete: c.Delete, List: c.List, Watch: c.Watch,
		NotFound: func(err error, name string) error { return jobtemplate.NotFound(err, "jobflow", name, o.Namespace) },
		Hint:     "finalizers may hold them",
	})
}
