package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// DeleteOptions holds the input of 'queue delete'.
type DeleteOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Names            []string
	Close            bool
	Wait             bool
	Timeout          time.Duration
	CommandNamespace string
	DryRun           string

	dryClient, dryServer bool
	client               versioned.Interface
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{IOStreams: streams, Factory: f}
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete queues",
		Long: templates.LongDesc(`
			Delete queues. The admission policies installed by 'kubectl vc install' only
			let a Closed queue be deleted; with --close the queues are first closed (one
			CloseQueue Command each), then deleted once they are Closed. The root and
			default queues cannot be deleted.`),
		Example: templates.Examples(`
			# Delete a closed queue
			kubectl vc queue delete team-a

			# Close, wait for Closed, delete, and wait until it is gone
			kubectl vc queue delete team-a --close --wait --timeout 10m`),
		ValidArgsFunction: completion.QueueNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&o.Close, "close", false, "Close each queue and wait until it is Closed before deleting it")
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "Wait until the queues are gone")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", DefaultWaitTimeout, "How long --close and --wait wait (0 waits forever)")
	cmd.Flags().StringVar(&o.CommandNamespace, "command-namespace", DefaultCommandNamespace, "Namespace of the CloseQueue Commands that --close creates")
	addDryRunFlag(cmd, &o.DryRun)
	return cmd
}

// Complete records names and resolves the dry-run mode and the client (a
// client dry run still looks the queues up).
func (o *DeleteOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.dryClient, o.dryServer, err = dryRunStrategy(o.DryRun); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate refuses the special queues and bad names before any request.
func (o *DeleteOptions) Validate() error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the queue(s) to delete, e.g. 'queue delete team-a'")
	}
	if err := validateNames(o.Names); err != nil {
		return err
	}
	for _, n := range o.Names {
		if n == keys.RootQueue || n == keys.DefaultQueue {
			return util.UsageErrorf("cannot delete queue %q: the root and default queues must always exist", n)
		}
	}
	if o.Timeout < 0 {
		return util.UsageErrorf("invalid --timeout %s: must not be negative", o.Timeout)
	}
	if (o.Wait || o.Close) && (o.dryClient || o.dryServer) {
		return util.UsageErrorf("--close and --wait cannot be combined with --dry-run")
	}
	return nil
}

// Run checks that every queue exists, closes them if asked, and deletes.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c := o.client
	queues, err := getQueues(ctx, c, o.Names)
	if err != nil {
		return err
	}
	if o.Close {
		var toClose []string
		for _, q := range queues {
			if stateOf(q) == schedulingv1beta1.QueueStateClosed {
				continue
			}
			cmd := newQueueCommand(q, busv1alpha1.CloseQueueAction, o.CommandNamespace)
			if _, err := c.BusV1alpha1().Commands(o.CommandNamespace).Create(ctx, cmd, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("close queue %q: %s", q.Name, util.Message(err))
			}
			toClose = append(toClose, q.Name)
		}
		if len(toClose) > 0 {
			if err := waitForState(ctx, c, toClose, schedulingv1beta1.QueueStateClosed, o.Timeout, o.ErrOut); err != nil {
				return err
			}
		}
	}
	suffix := ""
	switch {
	case o.dryClient:
		suffix = " (dry run)"
	case o.dryServer:
		suffix = " (server dry run)"
	}
	for _, q := range queues {
		if !o.dryClient {
			// Preconditions: delete exactly the queue we looked at.
			uid := q.UID
			err := c.SchedulingV1beta1().Queues().Delete(ctx, q.Name, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid},
				DryRun:        dryRunOpts(o.dryServer),
			})
			if err != nil {
				return fmt.Errorf("delete queue %q: %s", q.Name, util.Message(err))
			}
		}
		fmt.Fprintf(o.Out, "queue.scheduling.volcano.sh/%s deleted%s\n", q.Name, suffix)
	}
	if o.Wait {
		return waitForDeletion(ctx, c, o.Names, o.Timeout)
	}
	return nil
}
