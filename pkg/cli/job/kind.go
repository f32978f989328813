package job

import (
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is the Volcano Job.
var Kind = &kind.Kind[batchv1alpha1.Job, *batchv1alpha1.Job, *batchv1alpha1.JobList]{
	Name: "job", Example: "train",
	GVK: batchv1alpha1.SchemeGroupVersion.WithKind("Job"),
	Client: func(c versioned.Interface, ns string) kind.Client[*batchv1alpha1.Job, *batchv1alpha1.JobList] {
		return c.BatchV1alpha1().Jobs(ns)
	},
	// Jobs are Volcano's, and install does not add their CRD (see
	// 'install --help').
	NotServed: "the server has no Volcano Jobs (batch.volcano.sh/v1alpha1): install Volcano, whose job controller runs them; 'kubectl vc install' leaves the Job CRD to Volcano",
	Table:     jobTable,
	Describe:  describeJob,
	Why:       "job",
	Help:      kind.Helps{Describe: describeHelp},
	Group: kind.Group{Use: "job", Aliases: []string{"jobs", "vcjob", "vj"}, Help: kind.Help{
		Short: "Manage Volcano Jobs (batch.volcano.sh)",
		Long: `
				List, inspect, create and delete Volcano Jobs, and suspend, resume, restart or
				terminate them.

				Lifecycle changes are requested the way Volcano's vcctl does it: by creating a
				bus.volcano.sh Command (AbortJob, ResumeJob, RestartJob, TerminateJob) in the
				job's namespace, which Volcano's job controller applies. 'kubectl vc serve' has
				no job controller: where it runs instead of Volcano's controllers, a job Command
				stays pending ('kubectl vc command list' shows it).`,
		Example: `
				# Jobs of the current namespace with their pod counts
				kubectl vc job list

				# Suspend a job and wait until its pods are released
				kubectl vc job suspend train --wait`,
	}},
}

// ValidateName checks the name of an existing job (any object name).
func ValidateName(name string) error { return Kind.ValidateName(name) }
