package job

import (
	"strings"
	"testing"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
)

// TestWaitSuspend: --wait follows the job through Aborting to Aborted,
// reporting each step on stderr, and ends when it is Aborted.
func TestWaitSuspend(t *testing.T) {
	ns := namespace(t, "job-wait-suspend")
	makeJob(t, ns, "train", "research", 2, batchv1alpha1.JobRunning)
	b := start(t, "job", "suspend", "train", "-n", ns, "--wait")
	b.waitStderr(t, "job/train: Running (2 running), Command train-abortjob-")
	take(t, ns, "train", "AbortJob")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Running, s.Terminating = batchv1alpha1.JobAborting, 0, 2
	})
	b.waitStderr(t, "job/train: Aborting, 2 pod(s) still pending, running or terminating")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Terminating = batchv1alpha1.JobAborted, 0
	})
	r := b.wait(t)
	if r.Code != 0 || !strings.HasSuffix(r.Stderr, "job/train: Aborted\n") || !strings.HasPrefix(r.Stdout, "command.bus.volcano.sh/train-abortjob-") {
		t.Errorf("suspend --wait:\n%s", r)
	}
}

// TestWaitResume: resume leads from Aborted through Restarting (one more
// retry) to Pending.
func TestWaitResume(t *testing.T) {
	ns := namespace(t, "job-wait-resume")
	makeJob(t, ns, "train", "research", 2, batchv1alpha1.JobAborted)
	b := start(t, "job", "resume", "train", "-n", ns, "--wait")
	b.waitStderr(t, "job/train: Aborted, Command train-resumejob-")
	take(t, ns, "train", "ResumeJob")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.RetryCount = batchv1alpha1.JobRestarting, 1
	})
	b.waitStderr(t, "job/train: Restarting\n")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Pending = batchv1alpha1.JobPending, 2
	})
	r := b.wait(t)
	if r.Code != 0 || !strings.HasSuffix(r.Stderr, "job/train: Pending (2 pending)\n") {
		t.Errorf("resume --wait:\n%s", r)
	}
}

// TestWaitRestart: a restarted job is Running before and after, so --wait
// ends only once the job went through Restarting with one more retry.
func TestWaitRestart(t *testing.T) {
	ns := namespace(t, "job-wait-restart")
	makeJob(t, ns, "train", "research", 2, batchv1alpha1.JobRunning)
	b := start(t, "job", "restart", "train", "-n", ns, "--wait")
	b.waitStderr(t, "Command train-restartjob-")
	take(t, ns, "train", "RestartJob")
	b.waitStderr(t, "job/train: Running (2 running), Command taken by the job controller")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.RetryCount, s.Running, s.Terminating = batchv1alpha1.JobRestarting, 1, 0, 2
	})
	b.waitStderr(t, "job/train: Restarting, 2 pod(s) still pending, running or terminating")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Terminating, s.Running = batchv1alpha1.JobRunning, 0, 2
	})
	r := b.wait(t)
	if r.Code != 0 || !strings.HasSuffix(r.Stderr, "job/train: Running (2 running)\n") {
		t.Errorf("restart --wait:\n%s", r)
	}
}

// TestWaitTerminate: through Terminating to Terminated.
func TestWaitTerminate(t *testing.T) {
	ns := namespace(t, "job-wait-terminate")
	makeJob(t, ns, "a", "research", 1, batchv1alpha1.JobRunning)
	makeJob(t, ns, "b", "research", 1, batchv1alpha1.JobPending)
	b := start(t, "job", "terminate", "a", "b", "-n", ns, "--wait")
	take(t, ns, "a", "TerminateJob")
	take(t, ns, "b", "TerminateJob")
	setStatus(t, ns, "a", func(s *batchv1alpha1.JobStatus) { s.State.Phase = batchv1alpha1.JobTerminating })
	b.waitStderr(t, "job/a: Terminating")
	setStatus(t, ns, "a", func(s *batchv1alpha1.JobStatus) { s.State.Phase, s.Running = batchv1alpha1.JobTerminated, 0 })
	b.waitStderr(t, "job/a: Terminated")
	select {
	case <-b.done:
		t.Fatalf("--wait ended before job b was Terminated:\n%s", b.err.String())
	default:
	}
	setStatus(t, ns, "b", func(s *batchv1alpha1.JobStatus) { s.State.Phase = batchv1alpha1.JobTerminated })
	r := b.wait(t)
	if r.Code != 0 || !strings.Contains(r.Stderr, "job/b: Terminated\n") {
		t.Errorf("terminate --wait:\n%s", r)
	}
}

// TestWaitRefused: the job completed before the controller took the
// AbortJob Command, so the controller drops it and the job stays
// Completed. --wait reports that at once instead of waiting for Aborted.
func TestWaitRefused(t *testing.T) {
	ns := namespace(t, "job-wait-refused")
	makeJob(t, ns, "train", "research", 1, batchv1alpha1.JobRunning)
	b := start(t, "job", "suspend", "train", "-n", ns, "--wait", "--timeout", "0")
	b.waitStderr(t, "Command train-abortjob-")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.Running, s.Succeeded = batchv1alpha1.JobCompleted, 0, 1
	})
	take(t, ns, "train", "AbortJob")
	r := b.wait(t)
	want := `error: job "train" is Completed: the job controller took the AbortJob Command without acting on it (only a Pending or Running job can be suspended)`
	if r.Code != 1 || !strings.HasSuffix(r.Stderr, want+"\n") {
		t.Errorf("refused suspend, want exit 1 and %q:\n%s", want, r)
	}
}

// TestWaitRestartOutOfRetries: a job restarted with no retries left ends
// Failed; --wait says so.
func TestWaitRestartOutOfRetries(t *testing.T) {
	ns := namespace(t, "job-wait-failed")
	makeJob(t, ns, "train", "research", 1, batchv1alpha1.JobRunning)
	b := start(t, "job", "restart", "train", "-n", ns, "--wait")
	take(t, ns, "train", "RestartJob")
	setStatus(t, ns, "train", func(s *batchv1alpha1.JobStatus) {
		s.State.Phase, s.RetryCount = batchv1alpha1.JobFailed, 3
	})
	r := b.wait(t)
	if r.Code != 1 || !strings.Contains(r.Stderr, `error: job "train" Failed instead of being restarted (Pending or Running again): it ran out of retries (retried 3 times, maxRetry 3)`) {
		t.Errorf("restart into Failed:\n%s", r)
	}
}

// TestWaitWithoutJobController: where no job controller runs (serve has
// none), the Command stays: --wait times out saying so, 'command list'
// and 'job describe' show the Command waiting for a job controller.
func TestWaitWithoutJobController(t *testing.T) {
	ns := namespace(t, "job-no-controller")
	makeJob(t, ns, "train", "research", 1, batchv1alpha1.JobRunning)
	// Nothing will move the job, so the run lasts its whole --timeout. The
	// timeout also covers the binary's first lists of the job and its
	// Command: what it reports ("train is Running ..., Command ...") is
	// what it saw by then, and 2 s was less than a loaded two-core machine
	// can stall (it then reported "train is not seen"). 10 s outlasts such
	// a stall several times over.
	r := vc(t, "job", "suspend", "train", "-n", ns, "--wait", "--timeout", "10s")
	if r.Code != 1 || !strings.Contains(r.Stderr, `error: timed out after 10s waiting for job(s) to be Aborted: train is Running (1 running), Command train-abortjob-`) ||
		!strings.Contains(r.Stderr, "is Volcano's job controller running? 'kubectl vc serve' has none") {
		t.Errorf("suspend --wait without a job controller:\n%s", r)
	}
	cmds := commandsOf(t, ns, "train")
	if len(cmds) != 1 {
		t.Fatalf("want the Command still there, got %d", len(cmds))
	}
	r = mustVC(t, "command", "list", "-n", ns)
	if !strings.Contains(r.Stdout, cmds[0].Name) || !strings.Contains(r.Stderr, "waiting for a job controller") || !strings.Contains(r.Stderr, ns+"/"+cmds[0].Name) {
		t.Errorf("command list does not show the job Command waiting for a job controller:\n%s", r)
	}
	r = mustVC(t, "job", "describe", "train", "-n", ns)
	if !strings.Contains(r.Stdout, "Pending Commands:\n  "+cmds[0].Name) || !strings.Contains(r.Stdout, "AbortJob") ||
		!strings.Contains(r.Stdout, "waiting for a job controller (Volcano's; kubectl vc serve has none)") {
		t.Errorf("job describe does not show the pending Command:\n%s", r.Stdout)
	}
}

// TestWaitJobDeleted: a job deleted while --wait watches it ends the wait.
func TestWaitJobDeleted(t *testing.T) {
	ns := namespace(t, "job-wait-deleted")
	makeJob(t, ns, "train", "research", 1, batchv1alpha1.JobRunning)
	b := start(t, "job", "terminate", "train", "-n", ns, "--wait")
	b.waitStderr(t, "Command train-terminatejob-")
	mustVC(t, "job", "delete", "train", "-n", ns)
	r := b.wait(t)
	if r.Code != 1 || !strings.Contains(r.Stderr, `error: job "train" was deleted while waiting for it to be Terminated`) {
		t.Errorf("job deleted during --wait:\n%s", r)
	}
}
