package queue

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// DeleteOptions holds the input of 'queue delete'.
type DeleteOptions struct {
	Delete           write.DeleteOptions
	Close            bool
	CommandNamespace string
}

func newDeleteCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DeleteOptions{Delete: write.NewDeleteOptions(f, streams)}
	o.Delete.ClusterScoped = true
	cmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete queues",
		Long: templates.LongDesc(`
			Delete queues. The admission policies installed by 'kubectl vc install' only
			let a Closed queue be deleted; with --close the queues are first closed (one
			CloseQueue Command each), then deleted once they are Closed. The root and
			default queues cannot be deleted, nor a queue whose child queues are not
			named too: that is refused before anything is written. Named queues are
			deleted children first.`),
		Example: templates.Examples(`
			# Delete a closed queue
			kubectl vc queue delete team-a

			# Close, wait for Closed, delete, and wait until it is gone
			kubectl vc queue delete team-a --close --wait --timeout 10m

			# Delete a queue and its child queue (the child goes first)
			kubectl vc queue delete team-a team-a-batch --close`),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE:              util.RunE(o),
	}
	cmd.Flags().BoolVar(&o.Close, "close", false, "Close each queue and wait until it is Closed before deleting it")
	o.Delete.AddFlags(cmd, "Wait until the queues are gone", "How long --close and --wait wait (0 waits forever)")
	cmd.Flags().StringVar(&o.CommandNamespace, "command-namespace", DefaultCommandNamespace, "Namespace of the CloseQueue Commands that --close creates")
	return cmd
}

// Complete records the names and resolves the namespace, the dry-run
// mode and the client, as every delete does (write.DeleteOptions).
func (o *DeleteOptions) Complete(args []string) error { return o.Delete.Complete(args) }

// Validate refuses the special queues and bad names before any request.
func (o *DeleteOptions) Validate() error {
	if err := o.Delete.Validate("queue", "queue delete team-a", validateName); err != nil {
		return err
	}
	for _, n := range o.Delete.Names {
		if n == keys.RootQueue || n == keys.DefaultQueue {
			return util.UsageErrorf("cannot delete queue %q: the root and default queues must always exist", n)
		}
	}
	if o.Close && o.Delete.Dry() {
		return util.UsageErrorf("--close cannot be combined with --dry-run: nothing would be closed")
	}
	return nil
}

// Run checks that every queue exists, closes them if asked, and deletes.
func (o *DeleteOptions) Run(ctx context.Context) error {
	c := o.Delete.Client
	queues, err := getQueues(ctx, c, o.Delete.Names)
	if err != nil {
		return err
	}
	// Child queues are found in a list of every queue. A user allowed to
	// delete queues but not to list them is left to the admission policy,
	// which refuses a queue with children too (but only after --close).
	all, err := allQueues(ctx, c)
	if apierrors.IsForbidden(err) {
		all, err = nil, nil
	}
	if err != nil {
		return err
	}
	if queues, err = deletionOrder(queues, all); err != nil {
		return err
	}
	w := newWaiter(o.Delete.Factory, c, o.CommandNamespace, o.Delete.Timeout, o.Delete.ErrOut)
	if o.Close {
		var toClose []string
		for _, q := range queues {
			if rules.StateOrOpen(q.Status.State) == schedulingv1beta1.QueueStateClosed {
				continue
			}
			cmd := newQueueCommand(q, busv1alpha1.CloseQueueAction, o.CommandNamespace)
			if _, err := c.BusV1alpha1().Commands(o.CommandNamespace).Create(ctx, cmd, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("close queue %q: %s", q.Name, util.Message(err))
			}
			toClose = append(toClose, q.Name)
		}
		if len(toClose) > 0 {
			if err := w.forState(ctx, toClose, schedulingv1beta1.QueueStateClosed); err != nil {
				// Say what the timeout left behind: nothing was deleted,
				// and the queues stay where closing left them.
				return util.UsageErrorf("%s; nothing was deleted: %s left so, undeleted (delete once Closed: kubectl vc queue delete %s)",
					util.Message(err), strings.Join(names(queues), ", "), strings.Join(names(queues), " "))
			}
		}
	}
	// Children deleted by this call, by parent: the admission policy may
	// still see them for a moment (it reads queues from the API server's
	// cache), and on a server dry run they are never gone.
	deletedChildren := map[string][]string{}
	for _, q := range queues {
		if !o.Delete.DryClient {
			if err := o.deleteOne(ctx, q, deletedChildren[q.Name]); err != nil {
				return fmt.Errorf("delete queue %q: %s", q.Name, util.Message(err))
			}
		}
		if p := rules.EffectiveParent(q); p != "" {
			deletedChildren[p] = append(deletedChildren[p], q.Name)
		}
		o.Delete.Deleted(Kind.Ref(q.Name))
	}
	if o.Delete.Wait {
		return w.forDeletion(ctx, o.Delete.Names)
	}
	return nil
}

// deleteOne deletes exactly the queue that was looked at (UID
// precondition). A refusal that names only a child this call deleted is not
// the queue's fault: on a server dry run that child is still there by
// design, so the parent counts as deletable; otherwise the API server's
// admission cache has not seen the child go yet, so the delete is retried
// for a few seconds.
func (o *DeleteOptions) deleteOne(ctx context.Context, q *schedulingv1beta1.Queue, deletedChildren []string) error {
	del := func() error {
		return o.Delete.Client.SchedulingV1beta1().Queues().Delete(ctx, q.Name, o.Delete.DeleteOpts(q.UID))
	}
	err := del()
	if err == nil || !refusedForChild(err, deletedChildren) {
		return err
	}
	if o.Delete.DryServer {
		return nil
	}
	backoff := wait.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Steps: 8, Cap: 2 * time.Second}
	return retry.OnError(backoff, func(err error) bool { return refusedForChild(err, deletedChildren) }, del)
}

// refusedForChild reports whether err is the admission refusal for one of
// these children (the children rule's message, vc-queue-delete's in index
// mode and vc-queue-delete-children's in per-queue mode, names a child, the
// first by name, "and N more" when there are others; hierarchy.go has
// already refused a deletion that keeps any child).
func refusedForChild(err error, children []string) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	msg := err.Error()
	for _, c := range children {
		if strings.Contains(msg, "has child queue "+c+":") || strings.Contains(msg, "has child queue "+c+" (and ") {
			return true
		}
	}
	return false
}

// names returns the names of queues, in order.
func names(queues []*schedulingv1beta1.Queue) []string {
	out := make([]string, 0, len(queues))
	for _, q := range queues {
		out = append(out, q.Name)
	}
	return out
}
