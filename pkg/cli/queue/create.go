package queue

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// queueCreateStates are the states a queue can be created in.
var queueCreateStates = []schedulingv1beta1.QueueState{schedulingv1beta1.QueueStateOpen, schedulingv1beta1.QueueStateClosed}

// CreateOptions holds the input of 'queue create'.
type CreateOptions struct {
	Write write.Options

	Name        string
	Weight      int32
	Capability  string
	Deserved    string
	Guarantee   string
	Parent      string
	Priority    int32
	Reclaimable bool
	State       string

	reclaimableSet bool
	queue          *schedulingv1beta1.Queue
}

func newCreateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CreateOptions{Write: write.NewOptions(f, streams, "created")}
	o.Write.ClusterScoped, o.Write.Offline = true, true // a client dry run only prints the queue: no cluster needed
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a queue",
		Long: templates.LongDesc(`
			Create a Volcano queue. Resource lists are NAME=QUANTITY pairs separated by
			commas. A queue created with --state Closed is created and then closed with a
			CloseQueue Command, because state lives in the status the controller owns.`),
		Example: templates.Examples(`
			# A queue with twice the default share, capped at 4 CPUs and 8Gi
			kubectl vc queue create team-a --weight 2 --capability cpu=4,memory=8Gi

			# A child queue with a guaranteed reservation
			kubectl vc queue create team-a-batch --parent team-a --deserved cpu=2 --guarantee cpu=1

			# Print the queue without creating it
			kubectl vc queue create team-a --dry-run=client -o yaml`),
		Args: util.NameArgs("queue", 1, 1, "queue create team-a"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.reclaimableSet = cmd.Flags().Changed("reclaimable")
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.Write.AddFlags(cmd)
	cmd.Flags().Int32Var(&o.Weight, "weight", 1, "Share of the queue relative to its siblings (1-65535)")
	cmd.Flags().StringVar(&o.Capability, "capability", "", "Most the queue may use, e.g. cpu=4,memory=8Gi")
	cmd.Flags().StringVar(&o.Deserved, "deserved", "", "Share the queue is entitled to when the cluster is full, e.g. cpu=2")
	cmd.Flags().StringVar(&o.Guarantee, "guarantee", "", "Resources reserved for the queue, e.g. cpu=1 (at most --deserved)")
	cmd.Flags().StringVar(&o.Parent, "parent", "", "Parent queue (default: root)")
	cmd.Flags().Int32Var(&o.Priority, "priority", 0, "Priority of the queue; higher is scheduled first and reclaimed last")
	cmd.Flags().BoolVar(&o.Reclaimable, "reclaimable", true, "Whether other queues may reclaim what this queue uses beyond its deserved share")
	util.AddEnumFlag(cmd, &o.State, "state", "Open", "Initial state", util.Names(queueCreateStates))
	_ = cmd.RegisterFlagCompletionFunc("parent", Kind.NameFlag(f))
	return cmd
}

// Complete records the name and resolves the dry-run mode, the printer and
// (unless nothing is sent) the client.
func (o *CreateOptions) Complete(args []string) error {
	if len(args) == 0 {
		return util.UsageErrorf("name the queue to create, e.g. 'kubectl vc queue create team-a'")
	}
	o.Name = args[0]
	return o.Write.Complete()
}

// Validate rejects bad input before anything is written.
func (o *CreateOptions) Validate() error {
	if err := validateNewName(o.Name); err != nil {
		return err
	}
	if err := validateWeight(o.Weight); err != nil {
		return err
	}
	if err := validatePriority(o.Priority); err != nil {
		return err
	}
	state, err := util.Enum("state", o.State, queueCreateStates)
	if err != nil {
		return err
	}
	o.State = string(rules.StateOrOpen(state))
	if o.Parent != "" {
		if err := validateName(o.Parent); err != nil {
			return util.UsageErrorf("invalid --parent: %s", util.Message(err))
		}
		if o.Parent == o.Name {
			return util.UsageErrorf("invalid --parent %q: a queue cannot be its own parent", o.Parent)
		}
	}
	lists := map[string]corev1.ResourceList{}
	for flag, v := range map[string]string{"capability": o.Capability, "deserved": o.Deserved, "guarantee": o.Guarantee} {
		l, err := parseResources(flag, v)
		if err != nil {
			return err
		}
		lists[flag] = l
	}
	q := &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name},
		Spec: schedulingv1beta1.QueueSpec{
			Weight:     o.Weight,
			Capability: lists["capability"],
			Deserved:   lists["deserved"],
			Guarantee:  schedulingv1beta1.Guarantee{Resource: lists["guarantee"]},
			Parent:     o.Parent,
			Priority:   o.Priority,
		},
	}
	if o.reclaimableSet {
		q.Spec.Reclaimable = ptr.To(o.Reclaimable)
	}
	if err := checkResources(&q.Spec); err != nil {
		return err
	}
	o.queue = q
	return nil
}

// Run creates the queue (and, for --state Closed, its CloseQueue Command).
func (o *CreateOptions) Run(ctx context.Context) error {
	if o.Write.DryClient {
		return o.Write.Print(o.queue)
	}
	c := o.Write.Client
	spec := &o.queue.Spec
	if o.Parent != "" || len(spec.Capability)+len(spec.Deserved)+len(spec.Guarantee.Resource) > 0 {
		// What needs the other queues, read once: a queue under a missing
		// parent would never be scheduled, one whose parent is below it
		// would close a cycle, and its resources must fit its parent's
		// and its children's (a queue may name it as parent already).
		all, err := allQueues(ctx, c)
		if err != nil {
			return err
		}
		check := keepParent
		if o.Parent != "" {
			check = newParent
		}
		if err := checkPlacement(o.queue, all, check); err != nil {
			return err
		}
	}
	created, err := c.SchedulingV1beta1().Queues().Create(ctx, o.queue, metav1.CreateOptions{DryRun: o.Write.ServerDryRun()})
	if err != nil {
		if apierrors.IsAlreadyExists(err) {
			return util.UsageErrorf("queue %q already exists: use 'kubectl vc queue update %s' to change it", o.Name, o.Name)
		}
		return err
	}
	if o.State == string(schedulingv1beta1.QueueStateClosed) && !o.Write.DryServer {
		cmd := newQueueCommand(created, busv1alpha1.CloseQueueAction, DefaultCommandNamespace)
		if _, err := c.BusV1alpha1().Commands(DefaultCommandNamespace).Create(ctx, cmd, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("queue %q was created but could not be closed: %s (retry with 'queue close %s')", o.Name, util.Message(err), o.Name)
		}
	}
	return o.Write.Print(created)
}
