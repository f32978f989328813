package nodeset

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// ScaleOptions holds the input of 'nodeset scale'.
type ScaleOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Name     string
	Replicas int32

	namespace string
	client    versioned.Interface
}

func newScaleCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &ScaleOptions{IOStreams: streams, Factory: f, Replicas: -1}
	cmd := &cobra.Command{
		Use:   "scale NAME --replicas N",
		Short: "Set the number of compute nodes of a NodeSet",
		Long: templates.LongDesc(`
			Set spec.replicas of a NodeSet. Scaling out adds pods with the lowest free
			ordinals. Scaling in never kills jobs: the controller cordons the pods to
			remove, drains their Slurm nodes and deletes each pod only once Slurm reports
			its node drained ('nodeset describe' shows the progress and deadlines).`),
		Example: templates.Examples(`
			# Ten compute nodes
			kubectl vc nodeset scale compute --replicas 10`),
		Args:              util.NameArgs("NodeSet", 1, 1, "nodeset scale compute --replicas 3"),
		ValidArgsFunction: Kind.NameArg(f),
		RunE:              util.RunE(o),
	}
	cmd.Flags().Int32Var(&o.Replicas, "replicas", -1, "The new number of pods (required, 0 or more)")
	return cmd
}

// Complete records the name and resolves the namespace and the client.
func (o *ScaleOptions) Complete(args []string) error {
	o.Name = args[0]
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	o.client, err = o.Factory.VolcanoClient()
	return err
}

// Validate checks the name and the replica count.
func (o *ScaleOptions) Validate() error {
	if err := validateName("NodeSet", o.Name); err != nil {
		return err
	}
	if o.Replicas < 0 {
		return util.UsageErrorf("--replicas is required and must be 0 or more")
	}
	return nil
}

// Run patches spec.replicas. A merge patch of that one field leaves every
// other field (including ones this tool does not model) as it is. A
// DaemonSet-mode NodeSet is refused, unwritten: it runs one pod per
// matching node and ignores replicas, so the scale would change nothing.
func (o *ScaleOptions) Run(ctx context.Context) error {
	cur, err := o.client.SlinkyV1beta1().NodeSets(o.namespace).Get(ctx, o.Name, metav1.GetOptions{})
	if err != nil {
		return util.InNamespace(err, o.namespace)
	}
	if cur.Spec.ScalingMode == slinkyv1beta1.ScalingModeDaemonSet {
		return fmt.Errorf("nodeset %s runs one pod per matching Kubernetes node (scalingMode DaemonSet) and ignores replicas: "+
			"choose its nodes with the template's node selector, affinity and tolerations", o.Name)
	}
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, o.Replicas)
	ns, err := o.client.SlinkyV1beta1().NodeSets(o.namespace).Patch(ctx, o.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: keys.CLIManager})
	if err != nil {
		return util.InNamespace(err, o.namespace)
	}
	fmt.Fprintf(o.Out, "nodeset.slinky.slurm.net/%s scaled to %d (currently %d pods)\n", ns.Name, o.Replicas, ns.Status.Replicas)
	return nil
}
