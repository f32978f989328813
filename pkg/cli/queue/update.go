package queue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
)

// UpdateOptions holds the input of 'queue update'.
type UpdateOptions struct {
	Write write.Options

	Name        string
	Weight      int32
	Capability  string
	Deserved    string
	Guarantee   string
	Parent      string
	Priority    int32
	Reclaimable bool

	changed map[string]bool
	lists   map[string]corev1.ResourceList
}

func newUpdateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UpdateOptions{Write: write.NewOptions(f, streams, "updated")}
	o.Write.ClusterScoped = true
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Change a queue's weight, resources, parent, priority or reclaimability",
		Long: templates.LongDesc(`
			Change fields of a queue's spec with a JSON merge patch: only the fields whose
			flags are given are sent, so fields this tool does not model are kept. A
			resource flag replaces the whole list (--capability cpu=8 drops a memory
			entry); an empty value (--capability "") removes the list. The patch carries
			the resourceVersion read, so a concurrent change makes it fail rather than
			be overwritten.`),
		Example: templates.Examples(`
			# Double a queue's share
			kubectl vc queue update team-a --weight 4

			# Move a queue under another parent and cap it
			kubectl vc queue update team-a-batch --parent team-b --capability cpu=8,memory=16Gi`),
		Args:              util.NameArgs("queue", 1, 1, "queue update team-a --weight 2"),
		ValidArgsFunction: Kind.NameArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.changed = map[string]bool{}
			for _, n := range []string{"weight", "capability", "deserved", "guarantee", "parent", "priority", "reclaimable"} {
				o.changed[n] = cmd.Flags().Changed(n)
			}
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
	cmd.Flags().StringVar(&o.Capability, "capability", "", "Most the queue may use, e.g. cpu=4,memory=8Gi (empty removes it)")
	cmd.Flags().StringVar(&o.Deserved, "deserved", "", "Deserved share, e.g. cpu=2 (empty removes it)")
	cmd.Flags().StringVar(&o.Guarantee, "guarantee", "", "Reserved resources, e.g. cpu=1 (empty removes it)")
	cmd.Flags().StringVar(&o.Parent, "parent", "", "Parent queue")
	cmd.Flags().Int32Var(&o.Priority, "priority", 0, "Priority of the queue")
	cmd.Flags().BoolVar(&o.Reclaimable, "reclaimable", true, "Whether other queues may reclaim what this queue uses beyond its deserved share")
	_ = cmd.RegisterFlagCompletionFunc("parent", Kind.NameFlag(f))
	return cmd
}

// Complete records the name and resolves the dry-run mode, the printer and
// the client (a client dry run still reads the queue).
func (o *UpdateOptions) Complete(args []string) error {
	if len(args) == 0 {
		return util.UsageErrorf("name the queue to update, e.g. 'kubectl vc queue update team-a --weight 2'")
	}
	o.Name = args[0]
	return o.Write.Complete()
}

// Validate checks every flag that was given.
func (o *UpdateOptions) Validate() error {
	if err := validateName(o.Name); err != nil {
		return err
	}
	anySet := false
	for _, c := range o.changed {
		anySet = anySet || c
	}
	if !anySet {
		return util.UsageErrorf("nothing to update: give at least one of --weight, --capability, --deserved, --guarantee, --parent, --priority, --reclaimable")
	}
	if o.changed["weight"] {
		if err := validateWeight(o.Weight); err != nil {
			return err
		}
	}
	if o.changed["priority"] {
		if err := validatePriority(o.Priority); err != nil {
			return err
		}
	}
	if o.changed["parent"] {
		if o.Name == keys.RootQueue {
			return util.UsageErrorf("the root queue has no parent")
		}
		if err := validateName(o.Parent); err != nil {
			return util.UsageErrorf("invalid --parent: %s", util.Message(err))
		}
		if o.Parent == o.Name {
			return util.UsageErrorf("invalid --parent %q: a queue cannot be its own parent", o.Parent)
		}
	}
	if o.Name == keys.RootQueue && (o.changed["capability"] || o.changed["deserved"] || o.changed["guarantee"]) {
		// As Volcano's queue webhook and our vc-queue-root policy refuse it.
		return util.UsageErrorf("the root queue's capability, deserved and guarantee cannot be changed: root stands for the whole cluster; set them on its child queues instead (kubectl vc queue update NAME --capability ...)")
	}
	o.lists = map[string]corev1.ResourceList{}
	for flag, v := range map[string]string{"capability": o.Capability, "deserved": o.Deserved, "guarantee": o.Guarantee} {
		if !o.changed[flag] {
			continue
		}
		l, err := parseResources(flag, v)
		if err != nil {
			return err
		}
		o.lists[flag] = l
	}
	return nil
}

// Run reads the queue, checks the rules that need its current values and
// the other queues (resources, a new parent's existence, no parent cycle)
// and sends one merge patch.
func (o *UpdateOptions) Run(ctx context.Context) error {
	c := o.Write.Client
	q, err := c.SchedulingV1beta1().Queues().Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	// The queue as it would be after the patch, for the rules.
	next := q.DeepCopy()
	if l, ok := o.lists["capability"]; ok {
		next.Spec.Capability = l
	}
	if l, ok := o.lists["deserved"]; ok {
		next.Spec.Deserved = l
	}
	if l, ok := o.lists["guarantee"]; ok {
		next.Spec.Guarantee.Resource = l
	}
	if o.changed["parent"] {
		next.Spec.Parent = o.Parent
	}
	if err := checkResources(&next.Spec); err != nil {
		return err
	}
	if len(o.lists) > 0 || o.changed["parent"] {
		all, err := allQueues(ctx, c)
		if err != nil {
			return err
		}
		// A new parent must exist, with every queue above it, and may not
		// be below this queue.
		check := keepParent
		if o.changed["parent"] {
			check = newParentChain
		}
		if err := checkPlacement(next, all, check); err != nil {
			return err
		}
	}

	spec := map[string]any{}
	if o.changed["weight"] {
		spec["weight"] = o.Weight
	}
	if o.changed["priority"] {
		spec["priority"] = o.Priority
	}
	if o.changed["reclaimable"] {
		spec["reclaimable"] = o.Reclaimable
	}
	if o.changed["parent"] {
		spec["parent"] = o.Parent
	}
	if l, ok := o.lists["capability"]; ok {
		spec["capability"] = replaceList(q.Spec.Capability, l)
	}
	if l, ok := o.lists["deserved"]; ok {
		spec["deserved"] = replaceList(q.Spec.Deserved, l)
	}
	if l, ok := o.lists["guarantee"]; ok {
		spec["guarantee"] = map[string]any{"resource": replaceList(q.Spec.Guarantee.Resource, l)}
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": q.ResourceVersion},
		"spec":     spec,
	})
	if err != nil {
		return err
	}
	if o.Write.DryClient {
		fmt.Fprintf(o.Write.ErrOut, "merge patch that would be sent: %s\n", patch)
		return o.Write.Print(q)
	}
	updated, err := c.SchedulingV1beta1().Queues().Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{DryRun: o.Write.ServerDryRun()})
	if err != nil {
		if apierrors.IsConflict(err) {
			return util.UsageErrorf("queue %q changed while it was being updated: run the command again", o.Name)
		}
		return err
	}
	return o.Write.Print(updated)
}

// replaceList makes a merge patch that sets the resource map to exactly
// want: keys only in old are sent as null, since a merge patch otherwise
// keeps them. An empty want removes the map.
func replaceList(old, want corev1.ResourceList) any {
	if len(want) == 0 {
		return nil
	}
	out := map[string]any{}
	for k := range old {
		out[string(k)] = nil
	}
	for k, v := range want {
		out[string(k)] = v.String()
	}
	return out
}
