package cli

import (
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/command"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/job"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobflow"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobtemplate"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/nodeset"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/pod"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/podgroup"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queue"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/serve"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why"
)

// Commands lists the command groups beyond version and completion. Each
// feature adds its constructor here.
func Commands() []Subcommand {
	return []Subcommand{
		{Cmd: install.NewCmd},
		{Cmd: install.NewUninstallCmd},
		group(nodesetGroup, nodeset.Commands),
		group(queueGroup, queue.Commands),
		group(podgroupGroup, podgroup.Commands),
		group(jobGroup, job.Commands),
		group(jobflowGroup, jobflow.Commands),
		group(jobtemplateGroup, jobtemplate.Commands),
		group(podGroup, pod.Commands),
		group(commandGroup, command.Commands),
		{Cmd: serve.NewCmd},
		{Cmd: doctor.NewCmd},
		{Cmd: why.NewCmd},
	}
}
