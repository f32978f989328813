package jobflow

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/flowkind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is the JobFlow.
var Kind = &kind.Kind[flowv1alpha1.JobFlow, *flowv1alpha1.JobFlow, *flowv1alpha1.JobFlowList]{
	Name: "jobflow", Words: "job flow", Example: "pipeline",
	GVK: flowv1alpha1.SchemeGroupVersion.WithKind("JobFlow"),
	Client: func(c versioned.Interface, ns string) kind.Client[*flowv1alpha1.JobFlow, *flowv1alpha1.JobFlowList] {
		return c.FlowV1alpha1().JobFlows(ns)
	},
	NotServed: flowkind.NotServed,
	Check:     Check,
	Reset:     func(jf *flowv1alpha1.JobFlow) { jf.Status = flowv1alpha1.JobFlowStatus{} },
	Table:     Table,
	Describe:  describeFlow,
	Help:      kind.Helps{Create: createHelp, List: listHelp, Describe: describeHelp, Delete: deleteHelp},
	Group: kind.Group{Use: "jobflow", Aliases: []string{"jobflows", "jf"}, Help: kind.Help{
		Short: "Manage Volcano JobFlows (flow.volcano.sh): jobs run in dependency order",
		Long: `
				Create, list, draw and delete Volcano JobFlows: steps naming JobTemplates, each
				waiting for the steps it depends on. Volcano's jobflow controller makes a Volcano
				Job (<flow>-<step>) for each step once the jobs of the steps it depends on have
				Completed. 'kubectl vc serve' has no jobflow controller, and 'kubectl vc install'
				leaves the JobFlow CRD to Volcano ('kubectl vc doctor' says whether it is served).`,
		Example: `
				# Flows with their steps done, running, failed and waiting
				kubectl vc jobflow list

				# Draw a flow: its steps, what each waits for, their jobs
				kubectl vc jobflow describe pipeline

				# The Volcano Jobs a flow made
				kubectl vc job list --flow pipeline`,
	}},
}

// Commands returns the commands of the 'jobflow' group.
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return flowkind.Commands(Kind, f, streams)
}
