package job

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DeleteOptions holds the input of 'job delete'.
type DeleteOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Names   []string
	Wait    bool
	Timeout time.Duration
	DryRun  string

	namespace            string
	dryClient, dryServer bool
	client               versioned.Interface
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{IOStreams: streams, Factory: f}
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
		ValidArgsFunction: Kind.Names(f),
		RunE:              util.RunE(o),
	}
	util.AddWaitFlags(cmd, &o.Wait, &o.Timeout, "Wait until the jobs are gone", "How long --wait waits (0 waits forever)")
	util.AddDryRunFlag(cmd, &o.DryRun)
	return cmd
}

// Complete records the names and resolves the namespace, dry-run mode and client.
func (o *DeleteOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.namespace, err = util.Namespace(o.Factory); err != nil {
		return err
	}
	if o.dryClient, o.dryServer, err = util.DryRunStrategy(o.DryRun); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks names and flags before any request.
func (o *DeleteOptions) Validate() error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the job(s) to delete, e.g. 'job delete train'")
	}
	if err := validateNames(o.Names); err != nil {
		return err
	}
	if err := util.ValidateWait(o.Timeout, o.Wait, o.dryClient || o.dryServer, "nothing would be deleted"); err != nil {
		return err
	}
	return nil
}

// Run checks that every job exists, then deletes them.
func (o *DeleteOptions) Run(ctx context.Context) error {
	jobs, err := getJobs(ctx, o.client, o.namespace, o.Names)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if !o.dryClient {
			// Preconditions: delete exactly the job we looked at.
			uid := j.UID
			err := o.client.BatchV1alpha1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid},
				DryRun:        util.DryRunOpts(o.dryServer),
			})
			if err != nil {
				return fmt.Errorf("delete job %q: %s", j.Name, util.Message(err))
			}
		}
		fmt.Fprintf(o.Out, "%s deleted%s\n", jobRef(j.Name), util.DryRunSuffix(o.dryClient, o.dryServer))
	}
	if o.Wait {
		return waitForDeletion(ctx, o.client, o.namespace, o.Names, o.Timeout)
	}
	return nil
}
