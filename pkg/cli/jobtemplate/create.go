package jobtemplate

import (
	"fmt"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

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

// createHelp is the help of 'jobtemplate create'.
var createHelp = kind.Help{
	Short: "Create job templates from a file",
	Long: `
			Create Volcano JobTemplates from a file (-f FILE, or -f - for standard input) of
			YAML or JSON: one or several flow.volcano.sh/v1alpha1 JobTemplates separated by
			---. Every object is read and checked first (another kind, an unknown field, a
			template without tasks, a namespace other than -n): then nothing is created.
			They are created in the file's order; the first one the server refuses ends the
			command, naming those created before it. vcctl's --file works too.`,
	Example: `
			# Create the templates of a file
			kubectl vc jobtemplate create -f templates.yaml

			# From standard input, printing what would be created
			cat templates.yaml | kubectl vc jobtemplate create -f - --dry-run=client -o yaml`,
}
