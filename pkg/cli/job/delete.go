package job

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// DeleteOptions holds the input of 'job delete'.
type DeleteOptions struct {
	Delete write.DeleteOptions
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{write.NewDeleteOptions(f, streams)}
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete jobs",
		Long: templates.LongDesc(`
			Delete jobs. Every job is looked up first, so a missing one fails the command
			before anything is deleted. The job's pods, PodGroup and pending Commands are
			owned by the job and removed after it by the garbage collector. With --wait,
			wait until the jobs are gone.`),
		Example: templates.Examples(`
			# Delete a job
			kubectl vc job delete train

			# Delete two jobs and wait until they are gone
			kubectl vc job delete train eval -n research --wait`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.Delete.AddFlags(cmd, "Wait until the jobs are gone", "How long --wait waits (0 waits forever)")
	return cmd
}

// Complete records the names and resolves the namespace, the dry-run
// mode and the client, as every delete does (write.DeleteOptions).
func (o *DeleteOptions) Complete(args []string) error { return o.Delete.Complete(args) }

// Validate checks names and flags before any request.
func (o *DeleteOptions) Validate() error {
	return o.Delete.Validate("job", "job delete train", ValidateName)
}

// Run checks that every job exists, then deletes them.
func (o *DeleteOptions) Run(ctx context.Context) error {
	return write.DeleteNamed(ctx, &o.Delete, Kind, jobWait(o.Delete.Client, kubeClient(o.Delete.Factory), o.Delete.Namespace, o.Delete.Names, o.Delete.Timeout).Explain)
}
