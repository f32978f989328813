package job

import (
	"fmt"
	"strings"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
)

// operation is one lifecycle request (suspend, resume, restart, terminate)
// and what Volcano's job controller does with it. The phase sets follow the
// controller's state machine: a job Command is applied only in the phases
// listed in accepts; in any other phase the controller deletes the Command
// and leaves the job as it is.
type operation struct {
	verb   string // suspend
	action string // AbortJob
	// target says where the job ends up, for messages ("Aborted").
	target string
	// accepts are the phases in which the controller applies the action.
	accepts []batchv1alpha1.JobPhase
	// onTheWay are the phases a job passes through on its way to the target.
	onTheWay []batchv1alpha1.JobPhase
	// reached reports whether the job got there, given the retry count it
	// had when the Command was written.
	reached func(j *batchv1alpha1.Job, startRetries int32) bool
	// refusal explains, for a phase not accepted, why nothing will happen.
	refusal func(p batchv1alpha1.JobPhase) string
}

var (
	suspendOp = operation{
		verb: "suspend", action: busv1alpha1.AbortJobAction, target: "Aborted",
		accepts:  []batchv1alpha1.JobPhase{batchv1alpha1.JobPending, batchv1alpha1.JobRunning},
		onTheWay: []batchv1alpha1.JobPhase{batchv1alpha1.JobAborting},
		reached: func(j *batchv1alpha1.Job, _ int32) bool {
			return phaseOf(j) == batchv1alpha1.JobAborted
		},
		refusal: func(p batchv1alpha1.JobPhase) string {
			switch p {
			case batchv1alpha1.JobAborting, batchv1alpha1.JobAborted:
				return "it is already suspended"
			case batchv1alpha1.JobRestarting:
				return "the job controller ignores AbortJob while a job restarts: retry once it is Pending"
			}
			return "only a Pending or Running job can be suspended"
		},
	}
	resumeOp = operation{
		verb: "resume", action: busv1alpha1.ResumeJobAction, target: "resumed (Pending or Running)",
		accepts:  []batchv1alpha1.JobPhase{batchv1alpha1.JobAborting, batchv1alpha1.JobAborted},
		onTheWay: []batchv1alpha1.JobPhase{batchv1alpha1.JobRestarting},
		reached: func(j *batchv1alpha1.Job, _ int32) bool {
			return isActive(phaseOf(j))
		},
		refusal: func(batchv1alpha1.JobPhase) string {
			return "only a suspended (Aborting or Aborted) job can be resumed"
		},
	}
	restartOp = operation{
		verb: "restart", action: busv1alpha1.RestartJobAction, target: "restarted (Pending or Running again)",
		accepts:  []batchv1alpha1.JobPhase{batchv1alpha1.JobPending, batchv1alpha1.JobRunning},
		onTheWay: []batchv1alpha1.JobPhase{batchv1alpha1.JobRestarting},
		// RestartJob counts as a retry: a job back in an active phase with
		// more retries than before has been restarted.
		reached: func(j *batchv1alpha1.Job, startRetries int32) bool {
			return j.Status.RetryCount > startRetries && isActive(phaseOf(j))
		},
		refusal: func(p batchv1alpha1.JobPhase) string {
			switch p {
			case batchv1alpha1.JobRestarting:
				return "it is already restarting"
			case batchv1alpha1.JobAborting, batchv1alpha1.JobAborted:
				return "it is suspended: resume it instead ('kubectl vc job resume')"
			}
			return "only a Pending or Running job can be restarted"
		},
	}
	terminateOp = operation{
		verb: "terminate", action: busv1alpha1.TerminateJobAction, target: "Terminated",
		accepts:  []batchv1alpha1.JobPhase{batchv1alpha1.JobPending, batchv1alpha1.JobRunning},
		onTheWay: []batchv1alpha1.JobPhase{batchv1alpha1.JobTerminating},
		reached: func(j *batchv1alpha1.Job, _ int32) bool {
			return phaseOf(j) == batchv1alpha1.JobTerminated
		},
		refusal: func(p batchv1alpha1.JobPhase) string {
			switch p {
			case batchv1alpha1.JobTerminating, batchv1alpha1.JobTerminated:
				return "it is already terminated"
			case batchv1alpha1.JobAborting, batchv1alpha1.JobAborted:
				return "the job controller does not terminate a suspended job: delete it ('kubectl vc job delete')"
			}
			return "only a Pending or Running job can be terminated"
		},
	}
)

// isActive reports whether a job in phase p is scheduled or running
// again, where resume and restart lead.
func isActive(p batchv1alpha1.JobPhase) bool {
	switch p {
	case batchv1alpha1.JobPending, batchv1alpha1.JobRunning, batchv1alpha1.JobCompleting, batchv1alpha1.JobCompleted:
		return true
	}
	return false
}

func in(p batchv1alpha1.JobPhase, set []batchv1alpha1.JobPhase) bool {
	for _, s := range set {
		if s == p {
			return true
		}
	}
	return false
}

// check refuses, before anything is written, a job whose phase the job
// controller would not act on.
func (op operation) check(j *batchv1alpha1.Job) error {
	p := phaseOf(j)
	if in(p, op.accepts) {
		return nil
	}
	return fmt.Errorf("cannot %s job %q: it is %s: %s", op.verb, j.Name, p, op.refusal(p))
}

// verdict is where a job stands while --wait watches it.
type verdict int

const (
	waiting verdict = iota
	done
	refused
)

// watched is what --wait knows of one job.
type watched struct {
	name         string
	command      string // name of the Command written for it
	startRetries int32
}

// judge decides, from the job as last seen (nil once deleted) and whether
// its Command still exists, whether the job got where op leads, is still
// on its way, or will not get there: the job controller deletes a Command
// when it takes it, so a Command that is gone while the job sits in a
// phase op is not applied in means the controller refused it. It returns
// the verdict and a line of progress (or, when refused, the reason).
func (op operation) judge(w watched, j *batchv1alpha1.Job, commandPending bool) (verdict, string) {
	if j == nil {
		return refused, fmt.Sprintf("job %q was deleted while waiting for it to be %s", w.name, op.target)
	}
	p := phaseOf(j)
	if op.reached(j, w.startRetries) {
		return done, describePhase(j)
	}
	if commandPending {
		return waiting, fmt.Sprintf("%s, Command %s waiting for a job controller", describePhase(j), w.command)
	}
	if in(p, op.onTheWay) {
		return waiting, describePhase(j)
	}
	if in(p, op.accepts) && j.Status.RetryCount == w.startRetries {
		// Taken, not yet acted on: the controller writes the new phase
		// after it deletes the Command.
		return waiting, describePhase(j) + ", Command taken by the job controller"
	}
	if p == batchv1alpha1.JobFailed {
		return refused, fmt.Sprintf("job %q Failed instead of being %s: it ran out of retries (retried %d times, maxRetry %d)",
			w.name, op.target, j.Status.RetryCount, j.Spec.MaxRetry)
	}
	return refused, fmt.Sprintf("job %q is %s: the job controller took the %s Command without acting on it (%s)",
		w.name, p, op.action, op.refusal(p))
}

// describePhase is the phase with the pods still held, e.g.
// "Aborting, 2 pod(s) still pending, running or terminating".
func describePhase(j *batchv1alpha1.Job) string {
	p := phaseOf(j)
	s := j.Status
	switch p {
	case batchv1alpha1.JobAborting, batchv1alpha1.JobTerminating, batchv1alpha1.JobRestarting, batchv1alpha1.JobCompleting:
		if n := s.Pending + s.Running + s.Terminating; n > 0 {
			return fmt.Sprintf("%s, %d pod(s) still pending, running or terminating", p, n)
		}
	}
	var parts []string
	if s.Running > 0 {
		parts = append(parts, fmt.Sprintf("%d running", s.Running))
	}
	if s.Pending > 0 {
		parts = append(parts, fmt.Sprintf("%d pending", s.Pending))
	}
	if len(parts) == 0 {
		return string(p)
	}
	return fmt.Sprintf("%s (%s)", p, strings.Join(parts, ", "))
}
