package job

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/request"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// controllerNote is said wherever a job Command is written; it goes into
// help text indented as the text around it (three tabs), so that
// templates.LongDesc dedents the whole.
const controllerNote = `Volcano's job controller applies the Command and deletes it. 'kubectl vc serve' has
			no job controller: where serve runs instead of Volcano's controllers, the Command
			stays pending ('kubectl vc command list' and 'job describe' show it waiting for a
			job controller) and --wait times out.`

// OperateOptions holds the input of 'job suspend', 'resume', 'restart'
// and 'terminate': each writes one Command per job and may wait for the
// job to get where the action leads.
type OperateOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *genericclioptions.PrintFlags

	op operation

	Names   []string
	DryRun  string
	Wait    bool
	Timeout time.Duration

	// Set by Complete.
	namespace            string
	dryClient, dryServer bool
	printer              printers.ResourcePrinter
	client               versioned.Interface
}

func newOperateCmd(f util.Factory, streams genericiooptions.IOStreams, op operation, short, long, example string) *cobra.Command {
	o := &OperateOptions{IOStreams: streams, Factory: f, PrintFlags: write.NewPrintFlags("created"), op: op}
	cmd := &cobra.Command{
		Use:               op.verb + " NAME...",
		Short:             short,
		Long:              long,
		Example:           example,
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	write.AddFlags(cmd, o.PrintFlags, &o.DryRun)
	util.AddWaitFlags(cmd, &o.Wait, &o.Timeout, "Watch each job until it is "+op.target+", reporting progress on stderr; a job the job controller will not move there ends the wait with an error", "")
	return cmd
}

// Complete records the names and resolves the namespace, the dry-run
// mode, the printer (which says "created", and "(dry run)" on a dry run)
// and the client (a client dry run still looks the jobs up).
func (o *OperateOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.namespace, err = util.Namespace(o.Factory); err != nil {
		return err
	}
	if o.printer, o.dryClient, o.dryServer, err = util.CompleteWrite(o.DryRun, o.PrintFlags); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks the input before anything is read or written: at least
// one job, each valid and named once, --timeout, and no --wait on a dry
// run, which changes nothing to wait for.
func (o *OperateOptions) Validate() error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the job(s) to %s, e.g. 'kubectl vc job %s train'", o.op.verb, o.op.verb)
	}
	if err := util.ValidateNames("job", o.Names, ValidateName); err != nil {
		return err
	}
	return util.ValidateWait(o.Timeout, o.Wait, o.dryClient || o.dryServer, "nothing would change")
}

// Run looks up every job and checks its phase first (a missing job, or
// one the controller would not act on, fails the command before any
// Command exists), writes the Commands, printing each, and optionally
// waits.
func (o *OperateOptions) Run(ctx context.Context) error {
	jobs, err := getJobs(ctx, o.client, o.namespace, o.Names)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if err := o.op.check(j); err != nil {
			return util.UsageErrorf("%s", err)
		}
	}
	var watch []watched
	for _, j := range jobs {
		cm, err := request.Create(ctx, o.client, newJobCommand(j, o.op.action), o.dryClient, o.dryServer)
		if err != nil {
			return fmt.Errorf("%s job %q: %s", o.op.verb, j.Name, util.Message(err))
		}
		watch = append(watch, watched{name: j.Name, command: cm.Name, startRetries: j.Status.RetryCount})
		if err := write.Print(o.printer, o.PrintFlags, cm, o.Out); err != nil {
			return err
		}
	}
	if !o.Wait {
		return nil
	}
	return waitForOperation(ctx, o.client, kubeClient(o.Factory), o.namespace, o.op, watch, o.Timeout, o.ErrOut)
}

// newJobCommand builds the Command for job j as vcctl does: in the job's
// namespace, where Volcano's job controller looks for the job.
func newJobCommand(j *batchv1alpha1.Job, action string) *busv1alpha1.Command {
	return request.New(j, Kind.GVK, action, j.Namespace)
}

func newSuspendCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, suspendOp,
		"Suspend jobs (AbortJob): release their pods until they are resumed",
		templates.LongDesc(`
			Suspend jobs by writing one AbortJob Command per job in the job's namespace, as
			Volcano's vcctl does ('vcctl job suspend'). The job controller evicts the job's
			pods and makes no new ones: the job is Aborting, then Aborted, until it is
			resumed. Only a Pending or Running job can be suspended; any other is refused
			before anything is written.

			`+controllerNote+`

			With --wait, watch each job until it is Aborted, reporting progress on stderr.
			A job the controller does not suspend (for example one that completed before the
			controller took the Command) ends the wait with an error instead.`),
		templates.Examples(`
			# Suspend a job
			kubectl vc job suspend train

			# Suspend two jobs of namespace research and wait until their pods are gone
			kubectl vc job suspend train eval -n research --wait --timeout 10m

			# Show the Command that would be written
			kubectl vc job suspend train --dry-run=client -o yaml`))
}

func newResumeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, resumeOp,
		"Resume suspended jobs (ResumeJob)",
		templates.LongDesc(`
			Resume suspended (Aborting or Aborted) jobs by writing one ResumeJob Command per
			job, as 'vcctl job resume' does. The job controller restarts the job (Restarting,
			then Pending); this counts as one of its retries. A job that is not suspended is
			refused before anything is written.

			`+controllerNote+`

			With --wait, watch each job until it has left Aborted for Pending or Running.`),
		templates.Examples(`
			# Resume a job and wait until it is scheduled again
			kubectl vc job resume train --wait`))
}

func newRestartCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, restartOp,
		"Restart jobs (RestartJob): delete their pods and make them again",
		templates.LongDesc(`
			Restart Pending or Running jobs by writing one RestartJob Command per job. The job
			controller deletes every pod of the job and makes them again (Restarting, then
			Pending); this counts as one of the job's retries, and a job out of retries
			(spec.maxRetry) becomes Failed instead.

			`+controllerNote+`

			With --wait, watch each job until it is Pending or Running again with one more
			retry; a job that Failed ends the wait with an error.`),
		templates.Examples(`
			# Restart a job and wait until it is back
			kubectl vc job restart train --wait`))
}

func newTerminateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, terminateOp,
		"Terminate jobs (TerminateJob): stop them for good",
		templates.LongDesc(`
			Terminate Pending or Running jobs by writing one TerminateJob Command per job. The
			job controller evicts the job's pods (Terminating, then Terminated); unlike a
			suspended job, a terminated one cannot be resumed. The Job object stays until it
			is deleted.

			`+controllerNote+`

			With --wait, watch each job until it is Terminated.`),
		templates.Examples(`
			# Terminate a job and wait until its pods are gone
			kubectl vc job terminate train --wait`))
}
