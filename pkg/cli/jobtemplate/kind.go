package jobtemplate

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/flowkind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is the JobTemplate.
var Kind = &kind.Kind[flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplateList]{
	Name: "jobtemplate", Words: "job template", Example: "preprocess",
	GVK: flowv1alpha1.SchemeGroupVersion.WithKind("JobTemplate"),
	Client: func(c versioned.Interface, ns string) kind.Client[*flowv1alpha1.JobTemplate, *flowv1alpha1.JobTemplateList] {
		return c.FlowV1alpha1().JobTemplates(ns)
	},
	NotServed: flowkind.NotServed,
	Check:     check,
	Reset:     func(t *flowv1alpha1.JobTemplate) { t.Status = flowv1alpha1.JobTemplateStatus{} },
	Table:     Table,
	Describe:  describeTemplate,
	Help:      kind.Helps{Create: createHelp, List: listHelp, Describe: describeHelp, Delete: deleteHelp},
	Group: kind.Group{Use: "jobtemplate", Aliases: []string{"jobtemplates", "jt"}, Help: kind.Help{
		Short: "Manage Volcano JobTemplates (flow.volcano.sh): the jobs of a JobFlow",
		Long: `
				Create, list, describe and delete Volcano JobTemplates: a Volcano Job's spec
				under a name, which JobFlow steps name. Volcano's jobtemplate controller records
				in each template the jobs made from it. 'kubectl vc install' leaves the
				JobTemplate CRD to Volcano.`,
		Example: `
				# Templates and the jobs made from them
				kubectl vc jobtemplate list

				# Create templates from a file
				kubectl vc jobtemplate create -f templates.yaml`,
	}},
}

// Commands returns the commands of the 'jobtemplate' group: jobflow's,
// over the JobTemplate.
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return flowkind.Commands(Kind, f, streams)
}
