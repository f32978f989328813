package analysis

import (
	"fmt"
	"strings"
	"time"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/evictions/infer"
)

// The job controller's words (volcano-sh/volcano, pkg/controllers/job):
// the event a deleted pod of a running job becomes (bus.PodEvictedEvent),
// the policy event that matches any, the reason of the events it records
// on the Job when it acts (jobcontroller.recordJobEvent), and the action
// it takes when no policy matches.
const (
	PodEvictedEvent = "PodEvicted"
	AnyEvent        = "*"
	ExecuteAction   = "ExecuteAction"
	SyncJobAction   = "SyncJob"
	// DefaultMaxRetry is what Volcano's admission sets an unset maxRetry to.
	DefaultMaxRetry = 3
)

// evictions notes each eviction of the object's pods (or of its group)
// and, for a Volcano Job, the lifecycle policy that then fired.
func (a *analyzer) evictions() {
	mine := a.ownEvictions()
	for i := range mine {
		ev := &mine[i]
		victim, object := ev.Namespace+"/"+ev.Victim, "pod/"+ev.Namespace+"/"+ev.Victim
		if ev.Victim == "" {
			victim = fmt.Sprintf("a pod of podgroup %s (its own record has expired)", ev.Group)
			object = "podgroup/" + ev.Namespace + "/" + ev.Group
		}
		msg := fmt.Sprintf("pod %s was evicted by Volcano's scheduler (%s) at %s", victim, ev.Action, ev.Time.UTC().Format(time.RFC3339))
		if ev.Node != "" {
			msg += " on node " + ev.Node
		}
		evidence := append([]string{}, ev.Evidence...)
		switch {
		case ev.For != nil:
			msg += ", for " + ev.Describe()
			evidence = append(evidence, ev.For.Evidence...)
		case ev.Action == infer.Shuffle:
			msg += ", to rebalance the cluster (shuffle), for no one in particular"
		default:
			msg += "; for whom is not known"
		}
		evidence = append(evidence, ev.Unknown...)
		r := a.note(Evicted, object, msg, evictionFix(ev.Action), evidence...)
		r.Eviction = ev
	}
	if a.s.Kind == Job && a.s.Job != nil && len(mine) > 0 {
		a.jobPolicy(mine)
	}
}

// ownEvictions are the evictions of the object: of its pods (by name, any
// UID: a Volcano Job's pod comes back under its name) or of its group.
func (a *analyzer) ownEvictions() []infer.Eviction {
	s := a.s
	group := s.GroupName
	if s.PodGroup != nil {
		group = s.PodGroup.Name
	} else if s.Kind == Job && s.Job != nil {
		if pg := a.jobGroup(); pg != nil {
			group = pg.Name
		}
	}
	var out []infer.Eviction
	for _, ev := range s.Evictions {
		if ev.Namespace != s.Namespace {
			continue
		}
		switch s.Kind {
		case Pod:
			if ev.Victim == s.Name {
				out = append(out, ev)
			}
		case PodGroup, Job:
			if group != "" && ev.Group == group || s.Kind == Job && ev.Victim != "" && strings.HasPrefix(ev.Victim, s.Name+"-") && ev.Group == "" {
				out = append(out, ev)
			}
		}
	}
	return out
}

func evictionFix(action string) string {
	switch action {
	case infer.Preempt, infer.GangPreempt:
		return "to keep it from being preempted, give it a higher priorityClassName, or mark its pods volcano.sh/preemptable: \"false\""
	case infer.Reclaim, infer.GangReclaim:
		return "its queue used more than its deserved share and another queue reclaimed it: raise the queue's deserved or guarantee, or mark its pods volcano.sh/preemptable: \"false\""
	}
	return ""
}

// Policy is the lifecycle policy that decides what the job controller
// does when a pod of the job is evicted.
type Policy struct {
	// Action is what the controller does: RestartJob, AbortJob, ... or
	// SyncJob when no policy matches (the pod is created again).
	Action string
	// From names the policy: spec.policies[i] or
	// spec.tasks[j].policies[i]; empty for the default.
	From string
	// Delay is the policy's timeout, when it has one.
	Delay string
}

// PolicyOnEviction returns the policy Volcano's job controller applies
// (jobcontroller's applyPolicies) to the PodEvicted event of a pod of
// task: the task's policies first, then the job's, the first whose events
// name PodEvicted or "*".
func PolicyOnEviction(job *batchv1alpha1.Job, task string) Policy {
	match := func(p batchv1alpha1.LifecyclePolicy) bool {
		events := append([]batchv1alpha1.Event{}, p.Events...)
		if p.Event != "" {
			events = append(events, p.Event)
		}
		for _, e := range events {
			if e == PodEvictedEvent || e == AnyEvent {
				return true
			}
		}
		return false
	}
	pol := func(p batchv1alpha1.LifecyclePolicy, from string) Policy {
		out := Policy{Action: p.Action, From: from}
		if p.Timeout != nil {
			out.Delay = p.Timeout.Duration.String()
		}
		return out
	}
	for j, t := range job.Spec.Tasks {
		if t.Name != task || task == "" {
			continue
		}
		for i, p := range t.Policies {
			if match(p) {
				return pol(p, fmt.Sprintf("spec.tasks[%d].policies[%d]", j, i))
			}
		}
	}
	for i, p := range job.Spec.Policies {
		if match(p) {
			return pol(p, fmt.Sprintf("spec.policies[%d]", i))
		}
	}
	return Policy{Action: SyncJobAction}
}

// taskOf is the task of a job's pod, from the name the job controller
// gives it: JOB-TASK-INDEX.
func taskOf(job *batchv1alpha1.Job, pod string) string {
	best := ""
	for _, t := range job.Spec.Tasks {
		if strings.HasPrefix(pod, job.Name+"-"+t.Name+"-") && len(t.Name) > len(best) {
			best = t.Name
		}
	}
	return best
}

// jobPolicy notes which policy fired after the job's latest eviction and
// what the job controller did.
func (a *analyzer) jobPolicy(evs []infer.Eviction) {
	j := a.s.Job
	last := evs[len(evs)-1]
	task := taskOf(j, last.Victim)
	p := PolicyOnEviction(j, task)
	maxRetry := j.Spec.MaxRetry
	maxNote := ""
	if maxRetry == 0 {
		maxRetry, maxNote = DefaultMaxRetry, " (the default)"
	}
	var msg string
	if p.From == "" {
		msg = fmt.Sprintf("no lifecycle policy of job %s/%s names PodEvicted: Volcano's job controller syncs the job (SyncJob), creating the evicted pod again under its name", j.Namespace, j.Name)
	} else {
		msg = fmt.Sprintf("the eviction fired the policy %s of job %s/%s: PodEvicted -> %s", p.From, j.Namespace, j.Name, p.Action)
		if p.Delay != "" {
			msg += " after " + p.Delay
		}
	}
	msg += fmt.Sprintf("; retry count %d of maxRetry %d%s", j.Status.RetryCount, maxRetry, maxNote)
	if j.Status.RetryCount >= maxRetry && (p.Action == "RestartJob" || strings.HasPrefix(p.Action, "Restart")) {
		msg += ": at maxRetry the job controller fails the job instead of restarting it"
	}
	msg += fmt.Sprintf("; the job is %s now", orPending(string(j.Status.State.Phase)))
	evidence := []string{fmt.Sprintf("job %s/%s status.retryCount=%d, spec.maxRetry=%d", j.Namespace, j.Name, j.Status.RetryCount, j.Spec.MaxRetry)}
	if task != "" {
		evidence = append(evidence, "task "+task+" (from the pod's name "+last.Victim+")")
	}
	// What the controller did: its ExecuteAction events on the Job.
	for _, e := range a.s.Events {
		if e.InvolvedObject.Kind != "Job" || e.Reason != ExecuteAction || infer.Time(&e).Before(last.Time.Time.Add(-infer.Slack)) {
			continue
		}
		evidence = append(evidence, fmt.Sprintf("event %s on job %s at %s: %q", e.Reason, j.Name, infer.Time(&e).UTC().Format(time.RFC3339), strings.TrimSpace(e.Message)))
	}
	fix := ""
	switch p.Action {
	case "AbortJob", "TerminateJob", "CompleteJob":
		fix = fmt.Sprintf("to have the job restart when evicted, make its policy PodEvicted -> RestartJob (spec.policies), then 'kubectl vc job resume %s -n %s' if it is Aborted", j.Name, j.Namespace)
	}
	a.note(EvictionPolicy, "job/"+j.Namespace+"/"+j.Name, msg, fix, evidence...)
}
