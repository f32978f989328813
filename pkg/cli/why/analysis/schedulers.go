package analysis

// Does a scheduler run for the object? The schedulers its pods name, whether
// each runs now (a fresh Lease, else a recent event), and the running one a
// misspelt name was likely meant to be.

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// schedulerNames are the schedulers the object's pods use: the pods', else
// the job's, else Volcano's.
func (a *analyzer) schedulerNames() []string {
	s := a.s
	set := map[string]bool{}
	switch {
	case s.Kind == Pod && s.Pod != nil:
		set[orDefaultScheduler(s.Pod.Spec.SchedulerName)] = true
	case len(s.Pods) > 0:
		for i := range s.Pods {
			set[orDefaultScheduler(s.Pods[i].Spec.SchedulerName)] = true
		}
	case s.Kind == Job && s.Job != nil:
		for _, t := range s.Job.Spec.Tasks {
			if n := t.Template.Spec.SchedulerName; n != "" {
				set[n] = true
			} else if n := s.Job.Spec.SchedulerName; n != "" {
				set[n] = true
			}
		}
		if len(set) == 0 && s.Job.Spec.SchedulerName != "" {
			set[s.Job.Spec.SchedulerName] = true
		}
	}
	if len(set) == 0 && len(s.VolcanoSchedulers) > 0 {
		set[s.VolcanoSchedulers[0]] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func orDefaultScheduler(n string) string {
	if n == "" {
		return corev1.DefaultSchedulerName
	}
	return n
}

func (a *analyzer) isVolcano(name string) bool {
	for _, n := range a.s.VolcanoSchedulers {
		if n == name {
			return true
		}
	}
	return false
}

// checkSchedulers: every scheduler the pods use must run.
func (a *analyzer) checkSchedulers() {
	obj := a.objectRef()
	for _, name := range a.schedulerNames() {
		seen := a.s.Schedulers[name]
		running, evidence := a.schedulerState(name, seen)
		switch {
		case running:
			a.ok("scheduler", "scheduler %q runs: %s", name, strings.Join(evidence, "; "))
		case a.isVolcano(name) || known(seen):
			fix := fmt.Sprintf("start Volcano's scheduler (in %s: 'kubectl -n %s get deployment,pods' and its log), or point the pods at a scheduler that runs", a.s.ControllersNamespace, a.s.ControllersNamespace)
			if !a.isVolcano(name) {
				fix = fmt.Sprintf("start scheduler %q, or point the pods at Volcano's scheduler", name)
			}
			a.block(SchedulerNotRunning, obj, fmt.Sprintf("scheduler %q, which the pods name, is not running: nothing will place them", name), fix, evidence...)
		default:
			msg := fmt.Sprintf("the pods name scheduler %q, which no scheduler in the cluster answers to: they stay Pending without an event", name)
			fix := "set schedulerName to a scheduler that runs"
			if near := a.nearestScheduler(name); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
				fix = fmt.Sprintf("set schedulerName: %s", near)
			}
			if a.s.Kind == Job {
				fix += " in the job's spec (and its tasks' templates), then recreate the job"
			} else {
				fix += " in the pod's spec (or its owner's template) and recreate the pod: a pod's schedulerName cannot change"
			}
			a.block(SchedulerUnknown, obj, msg, fix, evidence...)
		}
	}
}

// known reports whether anything shows that a scheduler of this name
// exists or existed: a Lease, an event, a pod it placed.
func known(s SchedulerSeen) bool {
	return s.Lease != nil || !s.LastEvent.IsZero() || s.BoundPod != ""
}

// schedulerState says whether a scheduler runs now, with the evidence:
// a fresh leader Lease; or, with no Lease at all, an event of its within
// RecentEvents.
func (a *analyzer) schedulerState(name string, seen SchedulerSeen) (bool, []string) {
	now := a.s.Now
	var ev []string
	fresh := false
	if seen.Lease != nil {
		var desc string
		fresh, desc = leaseState(seen.Lease, now)
		ev = append(ev, "Lease "+seen.LeaseName+" "+desc)
	} else if seen.LeaseName != "" {
		ev = append(ev, "no Lease "+seen.LeaseName)
	}
	recent := false
	switch {
	case !seen.LastEvent.IsZero():
		ago := now.Sub(seen.LastEvent)
		recent = ago <= RecentEvents
		ev = append(ev, fmt.Sprintf("last event from %q %s ago", name, human(ago)))
	case seen.Probed:
		ev = append(ev, fmt.Sprintf("no event from %q", name))
	}
	switch {
	case seen.BoundPod != "":
		ev = append(ev, fmt.Sprintf("it placed pod %s", seen.BoundPod))
	case seen.Probed:
		ev = append(ev, fmt.Sprintf("no pod placed by %q seen", name))
	}
	if seen.Lease != nil {
		return fresh, ev
	}
	return recent, ev
}

// nearestScheduler is the running scheduler whose name is closest to
// name, when it is close enough to be a typo.
func (a *analyzer) nearestScheduler(name string) string {
	best, bestD := "", 0
	names := make([]string, 0, len(a.s.Schedulers))
	for n := range a.s.Schedulers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == name {
			continue
		}
		if !known(a.s.Schedulers[n]) && !a.isVolcano(n) {
			continue
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(n))
		limit := len(n) / 3
		if limit < 2 {
			limit = 2
		}
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	return best
}

// SchedulerNames are the schedulers the pods of s use (the pods', else the
// job's, else Volcano's first name): what the command probes for.
func SchedulerNames(s *Snapshot) []string {
	a := &analyzer{s: s}
	return a.schedulerNames()
}
