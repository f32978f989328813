package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/util/templates"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/request"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// 'queue open' and 'queue close' move queues to a state as Volcano's vcctl
// does: one Command per queue, which the queue controller (Volcano's, or
// 'kubectl vc serve') applies and then deletes.

func newOpenCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, "open", busv1alpha1.OpenQueueAction, schedulingv1beta1.QueueStateOpen,
		"Open one or more queues",
		templates.LongDesc(`
			Open queues by creating one OpenQueue Command per queue, as Volcano's vcctl does.
			The queue controller (Volcano's, or 'kubectl vc serve') applies it and then
			deletes the Command. With --wait, watch each queue until its state is Open.`),
		templates.Examples(`
			# Open a queue
			kubectl vc queue open team-a

			# Open two queues and wait until both are Open
			kubectl vc queue open team-a team-b --wait --timeout 1m

			# Show the Command that would be created
			kubectl vc queue open team-a --dry-run=client -o yaml`))
}

func newCloseCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	return newOperateCmd(f, streams, "close", busv1alpha1.CloseQueueAction, schedulingv1beta1.QueueStateClosed,
		"Close one or more queues",
		templates.LongDesc(`
			Close queues by creating one CloseQueue Command per queue, as Volcano's vcctl does.
			A closed queue accepts no new podgroups. A queue that still holds podgroups
			is Closing until they are gone, then Closed. With --wait, watch each queue
			until it is Closed, reporting on stderr the podgroups still holding it.
			The root queue cannot be closed.`),
		templates.Examples(`
			# Close a queue
			kubectl vc queue close team-a

			# Close it and wait up to 10 minutes for its podgroups to finish
			kubectl vc queue close team-a --wait --timeout 10m

			# Put the Command in another namespace
			kubectl vc queue close team-a --command-namespace volcano-system`))
}

// OperateOptions holds the input of 'queue open' and 'queue close': both
// create one Command per queue and may wait for the resulting state.
type OperateOptions struct {
	genericiooptions.IOStreams
	Factory    util.Factory
	PrintFlags *genericclioptions.PrintFlags

	Action string
	Target schedulingv1beta1.QueueState
	Verb   string

	Names            []string
	DryRun           string
	CommandNamespace string
	Wait             bool
	Timeout          time.Duration

	// Set by Complete.
	dryClient, dryServer bool
	printer              printers.ResourcePrinter
	client               versioned.Interface
}

func newOperateCmd(f util.Factory, streams genericiooptions.IOStreams, verb, action string, target schedulingv1beta1.QueueState, short, long, example string) *cobra.Command {
	o := &OperateOptions{IOStreams: streams, Factory: f, PrintFlags: write.NewPrintFlags("created"), Action: action, Target: target, Verb: verb}
	cmd := &cobra.Command{
		Use:               verb + " NAME...",
		Short:             short,
		Long:              long,
		Example:           example,
		ValidArgsFunction: Kind.Where(func(q *schedulingv1beta1.Queue) bool { return canMoveTo(q, target) }).NameArgs(f),
		RunE:              util.RunE(o),
	}
	write.AddFlags(cmd, o.PrintFlags, &o.DryRun)
	cmd.Flags().StringVar(&o.CommandNamespace, "command-namespace", DefaultCommandNamespace, "Namespace to create the Command in (Volcano's controllers look in every namespace; vcctl uses default)")
	util.AddWaitFlags(cmd, &o.Wait, &o.Timeout, "Watch each queue until its status state is "+string(target)+", reporting progress on stderr", "")
	return cmd
}

// Complete records the names and resolves the dry-run mode, the printer
// (which says "created", and "(dry run)" on a dry run) and the client (a
// client dry run still looks the queues up).
func (o *OperateOptions) Complete(args []string) error {
	o.Names = args
	var err error
	if o.printer, o.dryClient, o.dryServer, err = util.CompleteWrite(o.DryRun, o.PrintFlags); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks the input before anything is read or written: at least
// one queue, each valid and named once, not root, the Command's namespace,
// --timeout, and no --wait on a dry run, which changes nothing to wait for.
func (o *OperateOptions) Validate() error {
	if len(o.Names) == 0 {
		return util.UsageErrorf("name the queue(s) to %s, e.g. 'kubectl vc queue %s team-a'", o.Verb, o.Verb)
	}
	if err := util.ValidateNames("queue", o.Names, validateName); err != nil {
		return err
	}
	for _, n := range o.Names {
		if n == keys.RootQueue {
			return util.UsageErrorf("cannot %s queue %q: it is the top of the queue hierarchy and is always open", o.Verb, n)
		}
	}
	if errs := validation.IsDNS1123Label(o.CommandNamespace); len(errs) > 0 {
		return util.UsageErrorf("invalid --command-namespace %q: %s", o.CommandNamespace, errs[0])
	}
	return util.ValidateWait(o.Timeout, o.Wait, o.dryClient || o.dryServer, "nothing would change")
}

// Run looks up every queue first (a missing one fails the command before
// any Command exists), creates the Commands, printing each, and
// optionally waits.
func (o *OperateOptions) Run(ctx context.Context) error {
	queues, err := getQueues(ctx, o.client, o.Names)
	if err != nil {
		return err
	}
	if o.Action == busv1alpha1.OpenQueueAction {
		if err := refuseClosedParents(ctx, o.client, queues); err != nil {
			return err
		}
	}
	for _, q := range queues {
		cm, err := request.Create(ctx, o.client, newQueueCommand(q, o.Action, o.CommandNamespace), o.dryClient, o.dryServer)
		if err != nil {
			return fmt.Errorf("%s queue %q: %s", o.Verb, q.Name, util.Message(err))
		}
		if err := write.Print(o.printer, o.PrintFlags, cm, o.Out); err != nil {
			return err
		}
	}
	if !o.Wait {
		return nil
	}
	return newWaiter(o.Factory, o.client, o.CommandNamespace, o.Timeout, o.ErrOut).forState(ctx, o.Names, o.Target)
}

// canMoveTo reports whether a queue may be moved to target, for
// completion: 'queue close' offers the queues not Closed or Closing (and
// never root, which is refused), 'queue open' those not Open.
func canMoveTo(q *schedulingv1beta1.Queue, target schedulingv1beta1.QueueState) bool {
	state := rules.StateOrOpen(q.Status.State)
	if target == schedulingv1beta1.QueueStateClosed {
		return q.Name != keys.RootQueue && state != schedulingv1beta1.QueueStateClosed && state != schedulingv1beta1.QueueStateClosing
	}
	return state != target
}
