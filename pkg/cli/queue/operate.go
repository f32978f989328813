package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// OperateOptions is shared by 'queue open' and 'queue close': both create
// one Command per queue and may wait for the resulting state.
type OperateOptions struct {
	write.Options

	Action string
	Target schedulingv1beta1.QueueState
	Verb   string

	Names            []string
	CommandNamespace string
	Wait             bool
	Timeout          time.Duration
}

func newOperateCmd(f util.Factory, streams genericiooptions.IOStreams, verb, action string, target schedulingv1beta1.QueueState, short, long, example string) *cobra.Command {
	o := &OperateOptions{Options: write.NewOptions(f, streams, "created"), Action: action, Target: target, Verb: verb}
	o.ClusterScoped = true
	cmd := &cobra.Command{
		Use:               verb + " NAME...",
		Short:             short,
		Long:              long,
		Example:           example,
		ValidArgsFunction: completion.Queues.Where(func(o runtime.Object) bool { return canMoveTo(o.(*schedulingv1beta1.Queue), target) }).Names(f),
		RunE:              util.RunE(o),
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVar(&o.CommandNamespace, "command-namespace", DefaultCommandNamespace, "Namespace to create the Command in (Volcano's controllers look in every namespace; vcctl uses default)")
	util.AddWaitFlags(cmd, &o.Wait, &o.Timeout, "Watch each queue until its status state is "+string(target)+", reporting progress on stderr", "")
	return cmd
}

// Complete records the names and resolves the dry-run mode, the printer
// and the client (a client dry run still looks the queues up).
func (o *OperateOptions) Complete(args []string) error {
	o.Names = args
	return o.Options.Complete()
}

// Validate checks the input before anything is read or written.
func (o *OperateOptions) Validate() error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the queue(s) to %s, e.g. 'kubectl vc queue %s team-a'", o.Verb, o.Verb)
	}
	if err := validateNames(o.Names); err != nil {
		return err
	}
	if err := refuseRoot(o.Verb, o.Names); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Label(o.CommandNamespace); len(errs) > 0 {
		return util.UsageErrorf("invalid --command-namespace %q: %s", o.CommandNamespace, errs[0])
	}
	if err := util.ValidateWait(o.Timeout, o.Wait, o.Dry(), "nothing would change"); err != nil {
		return err
	}
	return nil
}

// Run looks up every queue first (a missing one fails the command before
// any Command exists), creates the Commands and optionally waits.
func (o *OperateOptions) Run(ctx context.Context) error {
	c := o.Client
	queues, err := getQueues(ctx, c, o.Names)
	if err != nil {
		return err
	}
	if o.Action == busv1alpha1.OpenQueueAction {
		if err := refuseClosedParents(ctx, c, queues); err != nil {
			return err
		}
	}
	for _, q := range queues {
		cmdObj := newQueueCommand(q, o.Action, o.CommandNamespace)
		if !o.DryClient {
			cmdObj, err = c.BusV1alpha1().Commands(o.CommandNamespace).Create(ctx, cmdObj, metav1.CreateOptions{DryRun: o.ServerDryRun()})
			if err != nil {
				return fmt.Errorf("%s queue %q: %s", o.Verb, q.Name, util.Message(err))
			}
		}
		if err := o.Print(cmdObj); err != nil {
			return err
		}
	}
	if !o.Wait {
		return nil
	}
	return newWaiter(o.Factory, c, o.CommandNamespace, o.Timeout, o.ErrOut).forState(ctx, o.Names, o.Target)
}

// canMoveTo reports whether a queue may be moved to target, for
// completion: 'queue close' offers the queues not Closed or Closing (and
// never root, which is refused), 'queue open' those not Open.
func canMoveTo(q *schedulingv1beta1.Queue, target schedulingv1beta1.QueueState) bool {
	state := stateOf(q)
	if target == schedulingv1beta1.QueueStateClosed {
		return q.Name != keys.RootQueue && state != schedulingv1beta1.QueueStateClosed && state != schedulingv1beta1.QueueStateClosing
	}
	return state != target
}
