// Package job implements 'kubectl vc job' for Volcano batch.volcano.sh
// Jobs (list, describe, suspend, resume, restart, terminate, delete,
// create) and 'kubectl vc pod list', the pods of Volcano jobs and queues.
//
// Lifecycle changes are requested as vcctl requests them: one
// bus.volcano.sh Command per job, which Volcano's job controller applies.
// kubectl-vc serve has no job controller.
package job

import (
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/describe"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// Commands returns the commands of the 'job' group (its name, aliases
// and help are its Kind's Group).
func Commands(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command {
	return util.Build(f, streams, newCreateCmd, newListCmd, describe.Constructor(Kind), newSuspendCmd, newResumeCmd, newRestartCmd, newTerminateCmd, newDeleteCmd)
}

// phaseOf returns the job's phase; a job the controller has not written
// yet is Pending, as Volcano's job controller treats it.
func phaseOf(j *batchv1alpha1.Job) batchv1alpha1.JobPhase {
	if j.Status.State.Phase == "" {
		return batchv1alpha1.JobPending
	}
	return j.Status.State.Phase
}

// queueOf returns the job's queue (rules.QueueOf).
func queueOf(j *batchv1alpha1.Job) string { return rules.QueueOf(j.Spec.Queue) }

// replicas is the number of pods the job's tasks ask for.
func replicas(j *batchv1alpha1.Job) int32 {
	var n int32
	for _, t := range j.Spec.Tasks {
		n += t.Replicas
	}
	return n
}

// minAvailable is how many pods must run together: the spec's, else what
// the controller recorded, else every pod (Volcano's default).
func minAvailable(j *batchv1alpha1.Job) int32 {
	switch {
	case j.Spec.MinAvailable > 0:
		return j.Spec.MinAvailable
	case j.Status.MinAvailable > 0:
		return j.Status.MinAvailable
	}
	return replicas(j)
}

// phases are every phase a job can be in, in lifecycle order.
var phases = []batchv1alpha1.JobPhase{
	batchv1alpha1.JobPending, batchv1alpha1.JobRunning, batchv1alpha1.JobRestarting,
	batchv1alpha1.JobAborting, batchv1alpha1.JobAborted, batchv1alpha1.JobCompleting,
	batchv1alpha1.JobCompleted, batchv1alpha1.JobTerminating, batchv1alpha1.JobTerminated,
	batchv1alpha1.JobFailed,
}

// getJobs fetches every named job of the namespace before anything is
// written, so that a missing job fails the whole command.
func getJobs(ctx context.Context, c versioned.Interface, ns string, names []string) ([]*batchv1alpha1.Job, error) {
	out := make([]*batchv1alpha1.Job, 0, len(names))
	for _, n := range names {
		j, err := c.BatchV1alpha1().Jobs(ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, Kind.NotFound(err, n, ns)
		}
		out = append(out, j)
	}
	return out, nil
}
