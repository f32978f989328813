package queue

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/command"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// OperateOptions is shared by 'queue open' and 'queue close': both create
// one Command per queue and may wait for the resulting state.
type OperateOptions struct {
	command.Operate

	Action string
	Target schedulingv1beta1.QueueState
	Verb   string

	CommandNamespace string
}

func newOperateCmd(f util.Factory, streams genericiooptions.IOStreams, verb, action string, target schedulingv1beta1.QueueState, short, long, example string) *cobra.Command {
	o := &OperateOptions{Operate: command.NewOperate(f, streams), Action: action, Target: target, Verb: verb}
	o.ClusterScoped = true
	cmd := &cobra.Command{
		Use:               verb + " NAME...",
		Short:             short,
		Long:              long,
		Example:           example,
		ValidArgsFunction: Kind.Where(func(q *schedulingv1beta1.Queue) bool { return canMoveTo(q, target) }).NameArgs(f),
		RunE:              util.RunE(o),
	}
	o.AddFlags(cmd)
	cmd.Flags().StringVar(&o.CommandNamespace, "command-namespace", DefaultCommandNamespace, "Namespace to create the Command in (Volcano's controllers look in every namespace; vcctl uses default)")
	o.AddWaitFlags(cmd, "Watch each queue until its status state is "+string(target)+", reporting progress on stderr")
	return cmd
}

// Validate checks the input before anything is read or written.
func (o *OperateOptions) Validate() error {
	if err := o.ValidateNames("queue", o.Verb, "team-a", validateName); err != nil {
		return err
	}
	if err := refuseRoot(o.Verb, o.Names); err != nil {
		return err
	}
	if errs := validation.IsDNS1123Label(o.CommandNamespace); len(errs) > 0 {
		return util.UsageErrorf("invalid --command-namespace %q: %s", o.CommandNamespace, errs[0])
	}
	return o.ValidateWait()
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
		if _, err := o.Send(ctx, newQueueCommand(q, o.Action, o.CommandNamespace), o.Verb, "queue", q.Name); err != nil {
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
