package cli

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// group is the command group of a kind ('queue', 'job', ...) as a
// Subcommand: the group's command (name, aliases and help, from this file)
// with the commands the kind's package builds. The groups stand together
// here, as kubectl's command groups stand in its root command, so that the
// tree a user sees is read in one place.
func group(cmd func() *cobra.Command, commands func(util.Factory, genericiooptions.IOStreams) []*cobra.Command) Subcommand {
	return Subcommand{
		Cmd:  func(util.Factory, genericiooptions.IOStreams) *cobra.Command { return util.Group(cmd()) },
		Subs: commands,
	}
}

// queueGroup is the 'queue' command, without its commands.
func queueGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "queue",
		Aliases: []string{"queues", "q"},
		Short:   "Manage Volcano queues",
		Long: templates.LongDesc(`
				Create, inspect, open, close, update and delete Volcano queues.

				State changes (open, close) are requested the way Volcano's vcctl does it: by
				creating a bus.volcano.sh Command that the queue controller acts on.`),
		Example: templates.Examples(`
				# List queues with their podgroup counts
				kubectl vc queue list

				# How much of its deserved share each queue uses
				kubectl vc queue top

				# Close a queue and wait until it holds no more podgroups
				kubectl vc queue close team-a --wait --timeout 5m`),
	}
}

// jobGroup is the 'job' command, without its commands.
func jobGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "job",
		Aliases: []string{"jobs", "vcjob", "vj"},
		Short:   "Manage Volcano Jobs (batch.volcano.sh)",
		Long: templates.LongDesc(`
				List, inspect, create and delete Volcano Jobs, and suspend, resume, restart or
				terminate them.

				Lifecycle changes are requested the way Volcano's vcctl does it: by creating a
				bus.volcano.sh Command (AbortJob, ResumeJob, RestartJob, TerminateJob) in the
				job's namespace, which Volcano's job controller applies. 'kubectl vc serve' has
				no job controller: where it runs instead of Volcano's controllers, a job Command
				stays pending ('kubectl vc command list' shows it).`),
		Example: templates.Examples(`
				# Jobs of the current namespace with their pod counts
				kubectl vc job list

				# Suspend a job and wait until its pods are released
				kubectl vc job suspend train --wait`),
	}
}

// jobflowGroup is the 'jobflow' command, without its commands.
func jobflowGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "jobflow",
		Aliases: []string{"jobflows", "jf"},
		Short:   "Manage Volcano JobFlows (flow.volcano.sh): jobs run in dependency order",
		Long: templates.LongDesc(`
				Create, list, draw and delete Volcano JobFlows: steps naming JobTemplates, each
				waiting for the steps it depends on. Volcano's jobflow controller makes a Volcano
				Job (<flow>-<step>) for each step once the jobs of the steps it depends on have
				Completed. 'kubectl vc serve' has no jobflow controller, and 'kubectl vc install'
				leaves the JobFlow CRD to Volcano ('kubectl vc doctor' says whether it is served).`),
		Example: templates.Examples(`
				# Flows with their steps done, running, failed and waiting
				kubectl vc jobflow list

				# Draw a flow: its steps, what each waits for, their jobs
				kubectl vc jobflow describe pipeline

				# The Volcano Jobs a flow made
				kubectl vc job list --flow pipeline`),
	}
}

// jobtemplateGroup is the 'jobtemplate' command, without its commands.
func jobtemplateGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "jobtemplate",
		Aliases: []string{"jobtemplates", "jt"},
		Short:   "Manage Volcano JobTemplates (flow.volcano.sh): the jobs of a JobFlow",
		Long: templates.LongDesc(`
				Create, list, describe and delete Volcano JobTemplates: a Volcano Job's spec
				under a name, which JobFlow steps name. Volcano's jobtemplate controller records
				in each template the jobs made from it. 'kubectl vc install' leaves the
				JobTemplate CRD to Volcano.`),
		Example: templates.Examples(`
				# Templates and the jobs made from them
				kubectl vc jobtemplate list

				# Create templates from a file
				kubectl vc jobtemplate create -f templates.yaml`),
	}
}

// nodesetGroup is the 'nodeset' command, without its commands.
func nodesetGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "nodeset",
		Aliases: []string{"nodesets", "nss"},
		Short:   "Manage Slinky NodeSets (Slurm compute nodes as pods)",
		Long: templates.LongDesc(`
				Inspect and operate Slinky NodeSets: sets of pods that are Slurm compute
				nodes. Pods leave a NodeSet only after their Slurm node is drained: scale
				and cordon ask for that; the NodeSet controller ('kubectl vc serve') does it.`),
		Example: templates.Examples(`
				# NodeSets of the current namespace with their Slurm node states
				kubectl vc nodeset list

				# Remove two compute nodes once their jobs have finished
				kubectl vc nodeset scale compute --replicas 8

				# Stop new jobs on one node
				kubectl vc nodeset cordon compute-3`),
	}
}

// commandGroup is the 'command' command, without its commands.
func commandGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "command",
		Aliases: []string{"commands", "cmd"},
		Short:   "Inspect and delete pending Volcano Commands",
		Long: templates.LongDesc(`
				A Command asks a controller to act on an object (e.g. CloseQueue on a queue).
				The controller deletes it once applied, so every Command still listed is
				waiting: a Command that stays is a stuck request worth looking into, and one
				no controller will apply can be deleted.`),
		Example: templates.Examples(`
				kubectl vc command list -A -o wide
				kubectl vc command delete --all --queue dev -A`),
	}
}

// podgroupGroup is the 'podgroup' command, without its commands.
func podgroupGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "podgroup",
		Aliases: []string{"podgroups", "pg"},
		Short:   "Inspect Volcano podgroups",
		Long: templates.LongDesc(`
				List and describe Volcano podgroups: the gangs of pods the scheduler admits together.`),
		Example: templates.Examples(`
				# Podgroups of every namespace in queue team-a
				kubectl vc podgroup list -A --queue team-a

				# One podgroup with its member pods and events
				kubectl vc pg describe my-job -n batch`),
	}
}

// podGroup is the 'pod' command, without its commands.
func podGroup() *cobra.Command {
	return &cobra.Command{
		Use:     "pod",
		Aliases: []string{"pods", "po"},
		Short:   "List the pods of Volcano jobs and queues",
		Long: templates.LongDesc(`
				List the pods Volcano schedules, with their job, task and queue.`),
		Example: templates.Examples(`
				kubectl vc pod list --job train`),
	}
}
