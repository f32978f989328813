package nodeset

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// CordonOptions holds the input of 'nodeset cordon' and 'nodeset uncordon'.
type CordonOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Pods   []string
	Cordon bool

	namespace string
	kc        kubernetes.Interface
}

func newCordonCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CordonOptions{IOStreams: streams, Factory: f, Cordon: true}
	cmd := &cobra.Command{
		Use:   "cordon POD...",
		Short: "Drain the Slurm nodes of NodeSet pods",
		Long: templates.LongDesc(`
			Mark NodeSet pods cordoned (annotation ` + slinkyv1beta1.AnnotationPodCordon + `).
			The NodeSet controller then drains their Slurm nodes: running jobs finish, no
			new job starts. The pods stay; 'nodeset uncordon' resumes the nodes.`),
		Example: templates.Examples(`
			# Stop new jobs on compute-3
			kubectl vc nodeset cordon compute-3`),
		Args:              util.NameArgs("NodeSet pod", 1, -1, "nodeset cordon compute-0"),
		ValidArgsFunction: nodeSetPodKind.Names(f),
		RunE:              func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), args) },
	}
	return cmd
}

func (o *CordonOptions) run(ctx context.Context, args []string) error {
	if err := o.Complete(args); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

// Complete records the pods and resolves the namespace and the client.
func (o *CordonOptions) Complete(args []string) error {
	o.Pods = args
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	o.kc, err = o.Factory.KubeClient()
	return err
}

// Validate checks the pod names.
func (o *CordonOptions) Validate() error {
	for _, p := range o.Pods {
		if err := validateName("pod", p); err != nil {
			return err
		}
	}
	return nil
}

// Run sets or removes the cordon annotation, refusing pods that no NodeSet
// manages (nothing would act on the annotation).
func (o *CordonOptions) Run(ctx context.Context) error {
	for _, name := range o.Pods {
		pod, err := o.kc.CoreV1().Pods(o.namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return o.podNotFound(ctx, name)
		}
		if err != nil {
			return err
		}
		if _, err := nodeSetOfPod(pod); err != nil {
			return err
		}
		_, cordoned := pod.Annotations[slinkyv1beta1.AnnotationPodCordon]
		verb := "cordoned"
		var patch []byte
		if o.Cordon {
			patch = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, slinkyv1beta1.AnnotationPodCordon)
		} else {
			verb = "uncordoned"
			patch = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null}}}`, slinkyv1beta1.AnnotationPodCordon)
		}
		if cordoned == o.Cordon {
			fmt.Fprintf(o.Out, "pod/%s already %s\n", name, verb)
			continue
		}
		if _, err := o.kc.CoreV1().Pods(o.namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: keys.CLIManager}); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "pod/%s %s\n", name, verb)
	}
	return nil
}

// podNotFound says that name is no pod, and, since cordon takes the names
// of a NodeSet's pods, whether it is the NodeSet's own name.
func (o *CordonOptions) podNotFound(ctx context.Context, name string) error {
	verb := "uncordon"
	if o.Cordon {
		verb = "cordon"
	}
	if c, err := o.Factory.VolcanoClient(); err == nil && c != nil {
		if _, err := c.SlinkyV1beta1().NodeSets(o.namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			return util.UsageErrorf("%q is a NodeSet, not a pod: %s takes the names of its pods, such as %s-0 ('kubectl vc nodeset describe %s' lists them)", name, verb, name, name)
		}
	}
	return util.UsageErrorf("pod %q not found in namespace %q: %s takes the names of NodeSet pods, such as compute-0", name, o.namespace, verb)
}
