package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/command"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/hypernode"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/job"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobflow"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobtemplate"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/nodeset"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/pod"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/podgroup"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/queue"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/serve"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why"
)

// Commands lists the command groups beyond version and completion. Each
// feature adds its constructor here; a kind, its Kind's group and its
// commands, in one line.
func Commands() []Subcommand {
	return []Subcommand{
		{Cmd: install.NewCmd},
		{Cmd: install.NewUninstallCmd},
		group(nodeset.Kind.Group, nodeset.Commands),
		group(queue.Kind.Group, queue.Commands),
		group(podgroup.Kind.Group, podgroup.Commands),
		group(job.Kind.Group, job.Commands),
		group(jobflow.Kind.Group, jobflow.Commands),
		group(jobtemplate.Kind.Group, jobtemplate.Commands),
		group(pod.Kind.Group, pod.Commands),
		group(command.Kind.Group, command.Commands),
		group(hypernode.Kind.Group, hypernode.Commands),
		{Cmd: serve.NewCmd},
		{Cmd: doctor.NewCmd},
		{Cmd: why.NewCmd},
		{Cmd: evictions.NewCmd},
	}
}

// group is the command group of a kind ('queue', 'job', ...) as a
// Subcommand: the group's command (name, aliases and help, from the
// kind's Kind) with the commands the kind's package builds.
func group(g kind.Group, commands func(util.Factory, genericiooptions.IOStreams) []*cobra.Command) Subcommand {
	return Subcommand{
		Cmd:  func(util.Factory, genericiooptions.IOStreams) *cobra.Command { return util.Group(g.Command()) },
		Subs: commands,
	}
}
