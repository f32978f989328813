package analysis

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/topology"
)

// analyzer holds the snapshot, indexes over it, and the report being built.
type analyzer struct {
	s        *Snapshot
	rep      Report
	queues   map[string]*schedulingv1beta1.Queue
	children map[string][]string
}

// Analyze returns why the object of s does not run: its reasons, blocking
// ones first (in the order they were found: scheduler, group, queue,
// capacity, the scheduler's own words), and what was checked and found
// fine. An object that already runs (or is finished) is blocked by
// nothing: what was found is reported, not blocking.
func Analyze(s *Snapshot) Report {
	a := &analyzer{
		s:        s,
		rep:      Report{Kind: s.Kind, Namespace: s.Namespace, Name: s.Name, Reasons: []Reason{}, Checked: []Check{}},
		queues:   map[string]*schedulingv1beta1.Queue{},
		children: map[string][]string{},
	}
	if s.Kind == Queue {
		a.rep.Namespace = ""
	}
	for i := range s.Queues {
		q := &s.Queues[i]
		a.queues[q.Name] = q
	}
	for i := range s.Queues {
		q := &s.Queues[i]
		if p := rules.EffectiveParent(q); p != "" {
			a.children[p] = append(a.children[p], q.Name)
		}
	}
	for _, c := range a.children {
		sort.Strings(c)
	}
	for _, u := range s.Unreadable {
		a.note(NotChecked, "", fmt.Sprintf("could not read %s: what depends on it is not checked", u.What), "ask for read access to it (RBAC), or run as a user who has it", u.Error)
	}
	var waiting bool
	if s.Kind == Queue {
		waiting = a.queueTarget()
	} else {
		waiting = a.workload()
		if a.rep.Status != "" {
			a.evictions()
		}
	}
	if !waiting {
		for i := range a.rep.Reasons {
			a.rep.Reasons[i].Blocking = false
		}
	}
	sort.SliceStable(a.rep.Reasons, func(i, j int) bool {
		return a.rep.Reasons[i].Blocking && !a.rep.Reasons[j].Blocking
	})
	a.rep.Blocked = len(a.rep.Blocking()) > 0
	return a.rep
}

func (a *analyzer) block(code Code, object, msg, fix string, evidence ...string) *Reason {
	a.rep.Reasons = append(a.rep.Reasons, Reason{Reason: code, Blocking: true, Object: object, Message: msg, Fix: fix, Evidence: evidence})
	return &a.rep.Reasons[len(a.rep.Reasons)-1]
}

func (a *analyzer) note(code Code, object, msg, fix string, evidence ...string) *Reason {
	r := a.block(code, object, msg, fix, evidence...)
	r.Blocking = false
	return r
}

func (a *analyzer) ok(check, format string, args ...any) {
	a.rep.Checked = append(a.rep.Checked, Check{Check: check, Message: fmt.Sprintf(format, args...)})
}

// workload analyses a job, a podgroup or a pod; it returns whether the
// object is waiting to run.
func (a *analyzer) workload() bool {
	s := a.s
	waiting := a.status()
	if a.rep.Status == "" {
		return false // the object itself is missing; the command says so
	}
	a.checkSchedulers()
	group := a.checkGroup()
	// A pod whose named group is missing goes to the queue that group
	// will name: nothing to check yet.
	if group != nil || s.Kind == Job || s.Kind == Pod && s.Pod.Annotations[keys.KubeGroupName] == "" {
		if q := a.checkQueue(a.queueName(group), group != nil || s.Kind == Job); q != nil && group != nil {
			a.checkCapacity(group, q)
		}
	}
	a.checkTopology(group, waiting)
	if waiting {
		a.checkHeldByInqueue(group, topology.Build(s.HyperNodes, s.Nodes, s.NodesRead))
	}
	a.checkSchedulerWords(group)
	return waiting
}

// status sets the report's status and says whether the object waits.
func (a *analyzer) status() bool {
	s := a.s
	switch s.Kind {
	case Pod:
		p := s.Pod
		if p == nil {
			return false
		}
		switch {
		case p.DeletionTimestamp != nil:
			a.rep.Status = "Terminating"
			return false
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			a.rep.Status = string(p.Status.Phase)
			return false
		case p.Spec.NodeName != "":
			a.rep.Status = fmt.Sprintf("%s on node %s", orPending(string(p.Status.Phase)), p.Spec.NodeName)
			a.ok("pod", "pod %s/%s is placed on node %s: the scheduler is done with it", p.Namespace, p.Name, p.Spec.NodeName)
			return false
		}
		a.rep.Status = "Pending (not placed on a node)"
		return true
	case PodGroup:
		pg := s.PodGroup
		if pg == nil {
			return false
		}
		phase := pgPhase(pg)
		a.rep.Status = phase
		return phase == string(schedulingv1beta1.PodGroupPending) || phase == string(schedulingv1beta1.PodGroupInqueue) || phase == string(schedulingv1beta1.PodGroupUnknown)
	case Job:
		j := s.Job
		if j == nil {
			return false
		}
		phase := string(j.Status.State.Phase)
		if phase == "" {
			phase = string(batchv1alpha1.JobPending)
		}
		a.rep.Status = phase
		return phase == string(batchv1alpha1.JobPending)
	}
	return false
}
