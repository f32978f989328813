package jobtemplate

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/write"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// fileKind is what 'jobtemplate create -f' reads and writes.
var fileKind = write.FileKind[flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplate]{
	Name: "jobtemplate", GVK: flowv1alpha1.SchemeGroupVersion.WithKind("JobTemplate"), Ref: Ref,
	NameRule: validation.IsDNS1123Subdomain,
	Check:    check,
	Reset:    func(t *flowv1alpha1.JobTemplate) { t.Status = flowv1alpha1.JobTemplateStatus{} },
	Create: func(ctx context.Context, c versioned.Interface, t *flowv1alpha1.JobTemplate, opts metav1.CreateOptions) (*flowv1alpha1.JobTemplate, error) {
		return c.FlowV1alpha1().JobTemplates(t.Namespace).Create(ctx, t, opts)
	},
	APIError: APIError,
}

// check refuses a template no job could be made from: no tasks, or a
// task without containers.
func check(t *flowv1alpha1.JobTemplate) error {
	if len(t.Spec.Tasks) == 0 {
		return util.UsageErrorf("jobtemplate %q has no tasks", t.Name)
	}
	for i, task := range t.Spec.Tasks {
		if len(task.Template.Spec.Containers) == 0 {
			name := task.Name
			if name == "" {
				name = fmt.Sprintf("default%d", i)
			}
			return util.UsageErrorf("jobtemplate %q: task %q has no containers", t.Name, name)
		}
	}
	return nil
}

func newCreateCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := write.NewCreateFromFile(f, streams, fileKind)
	cmd := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create job templates from a file",
		Long: templates.LongDesc(`
			Create Volcano JobTemplates from a file (-f FILE, or -f - for standard input) of
			YAML or JSON: one or several flow.volcano.sh/v1alpha1 JobTemplates separated by
			---. Every object is read and checked first (another kind, an unknown field, a
			template without tasks, a namespace other than -n): then nothing is created.
			They are created in the file's order; the first one the server refuses ends the
			command, naming those created before it. vcctl's --file works too.`),
		Example: templates.Examples(`
			# Create the templates of a file
			kubectl vc jobtemplate create -f templates.yaml

			# From standard input, printing what would be created
			cat templates.yaml | kubectl vc jobtemplate create -f - --dry-run=client -o yaml`),
		RunE: util.RunE(o),
	}
	o.AddFlags(cmd)
	return cmd
}
