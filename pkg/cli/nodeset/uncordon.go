package nodeset

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

func newUncordonCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CordonOptions{IOStreams: streams, Factory: f, Cordon: false}
	return &cobra.Command{
		Use:   "uncordon POD...",
		Short: "Resume the Slurm nodes of cordoned NodeSet pods",
		Long: templates.LongDesc(`
			Remove the cordon annotation (` + slinkyv1beta1.AnnotationPodCordon + `) of NodeSet
			pods. The NodeSet controller resumes their Slurm nodes if it drained them; a
			drain set by a Slurm administrator is left alone.`),
		Example: templates.Examples(`
			# Let jobs run on compute-3 again
			kubectl vc nodeset uncordon compute-3`),
		Args:              util.NameArgs("NodeSet pod", 1, -1, "nodeset uncordon compute-0"),
		ValidArgsFunction: nodeSetPodKind.Names(f),
		RunE:              func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), args) },
	}
}
