// Package queueline reads what Volcano's scheduler orders a queue's
// waiting podgroups by (the podgroups, their pods, the priority classes,
// the nodes and the scheduler's configuration) and puts each queue's
// waiting podgroups in line (package joborder). 'queue pending' prints the
// lines; 'why' gives a podgroup's place in its line.
package queueline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/chunk"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules/joborder"
)

// Entry is one podgroup in line.
type Entry struct {
	Position int `json:"position"`
	joborder.Job
	Queue        string              `json:"queue"`
	MinResources corev1.ResourceList `json:"minResources,omitempty"`
	// Behind says why the podgroup before it comes first ("" for the head).
	Behind string `json:"behind,omitempty"`

	pg *schedulingv1beta1.PodGroup
}

// Line is the waiting podgroups of one queue, in order, and what the head
// waits for.
type Line struct {
	Queue   string  `json:"queue"`
	Entries []Entry `json:"podgroups"`
	// HeadWaits are the resources the head lacks, with numbers; empty
	// when none is short by the objects' numbers.
	HeadWaits []joborder.Short `json:"headWaits,omitempty"`
}

// Result is every line asked for and how they were ordered.
type Result struct {
	Config joborder.Config `json:"config"`
	// Order is the keys the line is sorted by, in order.
	Order []string `json:"order"`
	// Unknown are the enabled job-order plugins not modelled here.
	Unknown []string `json:"unknown,omitempty"`
	// Notes say what could not be read and what was assumed instead.
	Notes []string `json:"notes,omitempty"`
	Lines []Line   `json:"queues"`

	order joborder.Order
	// pods are every pod read, for what a group still needs placed.
	pods  []corev1.Pod
	idle  corev1.ResourceList
	queue map[string]*schedulingv1beta1.Queue
	pgs   []schedulingv1beta1.PodGroup
	// byGroup are the pods of each podgroup, by namespace/name.
	byGroup map[string][]corev1.Pod
}

// Reader reads the lines.
type Reader struct {
	VC        versioned.Interface
	Kube      kubernetes.Interface
	ChunkSize int64
	Config    joborder.Config
}

// Read reads the lines of the named queues, or of every queue that has a
// waiting podgroup when queues is empty. A named queue that does not
// exist is an error.
func (r *Reader) Read(ctx context.Context, queues ...string) (*Result, error) {
	res := &Result{Config: r.Config, order: joborder.New(r.Config), queue: map[string]*schedulingv1beta1.Queue{}}
	res.Order = append(append(res.Order, res.order.Plugins...), joborder.ByCreation, joborder.ByUID)
	res.Unknown = res.order.Unknown
	qs, _, err := chunk.List[schedulingv1beta1.Queue](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.SchedulingV1beta1().Queues().List)
	if err != nil {
		return nil, err
	}
	for i := range qs {
		res.queue[qs[i].Name] = &qs[i]
	}
	for _, q := range queues {
		if res.queue[q] == nil {
			return nil, util.UsageErrorf("queue %q not found", q)
		}
	}
	res.pgs, _, err = chunk.List[schedulingv1beta1.PodGroup](ctx, r.ChunkSize, metav1.ListOptions{}, r.VC.SchedulingV1beta1().PodGroups(metav1.NamespaceAll).List)
	if err != nil {
		return nil, err
	}
	classes, _, err := chunk.List[schedulingv1.PriorityClass](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.SchedulingV1().PriorityClasses().List)
	if err != nil {
		res.Notes = append(res.Notes, "could not read priority classes ("+util.Message(err)+"): every priority taken as 0")
	}
	nodes, _, err := chunk.List[corev1.Node](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Nodes().List)
	if err != nil {
		res.Notes = append(res.Notes, "could not read nodes ("+util.Message(err)+"): drf shares taken as 0, the cluster's room not checked")
	}
	res.pods, _, err = chunk.List[corev1.Pod](ctx, r.ChunkSize, metav1.ListOptions{}, r.Kube.CoreV1().Pods(metav1.NamespaceAll).List)
	if err != nil {
		res.Notes = append(res.Notes, "could not read pods ("+util.Message(err)+"): no pod counted ready (gang), drf shares taken as 0")
	}
	prio := joborder.NewPriorities(classes)
	total, _ := joborder.ClusterTotal(nodes)
	if nodes != nil {
		res.idle = joborder.ClusterIdle(nodes, res.pods)
	}
	members := res.members()
	res.byGroup = members
	want := map[string]bool{}
	for _, q := range queues {
		want[q] = true
	}
	byQueue := map[string][]Entry{}
	orphans := 0
	for i := range res.pgs {
		pg := &res.pgs[i]
		q := rules.QueueOf(pg.Spec.Queue)
		if !joborder.Waiting(pg) || (len(queues) > 0 && !want[q]) {
			continue
		}
		if res.queue[q] == nil {
			orphans++ // the scheduler ignores a job whose queue does not exist
			continue
		}
		e := Entry{Job: res.order.FromPodGroup(pg, members[pg.Namespace+"/"+pg.Name], prio, total), Queue: q, pg: pg}
		if e.Placed {
			continue // placed: its phase turns Running in the scheduler's next cycle
		}
		if pg.Spec.MinResources != nil {
			e.MinResources = *pg.Spec.MinResources
		}
		byQueue[q] = append(byQueue[q], e)
	}
	names := queues
	if len(names) == 0 {
		for q := range byQueue {
			names = append(names, q)
		}
		sort.Strings(names)
	}
	for _, q := range names {
		res.Lines = append(res.Lines, res.line(q, byQueue[q]))
	}
	if orphans > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d waiting podgroup(s) name a queue that does not exist: the scheduler leaves them out, and so does this line", orphans))
	}
	if p := prio.DefaultClass; p != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("podgroups naming no priority class, or a missing one, take the default class %s's value", p))
	}
	return res, nil
}

// line sorts one queue's entries and finds what the head waits for.
func (res *Result) line(q string, entries []Entry) Line {
	jobs := make([]joborder.Job, len(entries))
	byUID := map[string]Entry{}
	for i, e := range entries {
		jobs[i] = e.Job
		byUID[string(e.UID)+"/"+e.Namespace+"/"+e.Name] = e
	}
	res.order.Sort(jobs)
	l := Line{Queue: q, Entries: []Entry{}}
	for i := range jobs {
		e := byUID[string(jobs[i].UID)+"/"+jobs[i].Namespace+"/"+jobs[i].Name]
		e.Position = i + 1
		if i > 0 {
			e.Behind = res.order.Explain(&jobs[i-1], &jobs[i])
		}
		l.Entries = append(l.Entries, e)
	}
	if len(l.Entries) > 0 {
		l.HeadWaits = res.Wants(&l.Entries[0])
	}
	return l
}

// Wants is what a waiting podgroup lacks (joborder.Wants): against its
// queue's capability when Pending, its deserved share when Inqueue, and
// the cluster's idle resources.
func (res *Result) Wants(e *Entry) []joborder.Short {
	q := res.queue[e.Queue]
	if q == nil {
		return nil
	}
	others := corev1.ResourceList{}
	for i := range res.pgs {
		g := &res.pgs[i]
		if g.Status.Phase == schedulingv1beta1.PodGroupInqueue && rules.QueueOf(g.Spec.Queue) == e.Queue &&
			g.UID != e.UID && g.Spec.MinResources != nil {
			for r, v := range *g.Spec.MinResources {
				s := others[r]
				s.Add(v)
				others[r] = s
			}
		}
	}
	idle := res.idle
	if idle == nil { // nodes unreadable: no cluster check
		idle = corev1.ResourceList{}
		for r := range e.MinResources {
			idle[r] = e.MinResources[r]
		}
	}
	return joborder.Wants(e.pg, q, others, unplaced(e, res.byGroup), idle)
}

// unplaced sums the requests of the group's pods not on a node yet, as
// many as it still needs to reach minMember (at least one); its
// minResources when it has no such pods.
func unplaced(e *Entry, members map[string][]corev1.Pod) corev1.ResourceList {
	var placed int32
	var waiting []corev1.ResourceList
	for i := range members[e.Namespace+"/"+e.Name] {
		p := &members[e.Namespace+"/"+e.Name][i]
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
		case p.Spec.NodeName != "":
			placed++
		default:
			waiting = append(waiting, joborder.Requests(p))
		}
	}
	if len(waiting) == 0 {
		return e.MinResources
	}
	sum, _ := rules.StillToPlace(e.MinMember, placed, waiting)
	return sum
}

// Find returns the line and entry of a podgroup, nil when it does not wait.
func (res *Result) Find(ns, name string) (*Line, *Entry) {
	for i := range res.Lines {
		l := &res.Lines[i]
		for j := range l.Entries {
			if e := &l.Entries[j]; e.Namespace == ns && e.Name == name {
				return l, e
			}
		}
	}
	return nil, nil
}

// members are the pods of every podgroup read, by namespace/name.
func (res *Result) members() map[string][]corev1.Pod {
	m := map[string][]corev1.Pod{}
	for _, p := range res.pods {
		if g := p.Annotations[keys.KubeGroupName]; g != "" {
			m[p.Namespace+"/"+g] = append(m[p.Namespace+"/"+g], p)
		}
	}
	return m
}

// OrderText says in one line how the lines are ordered and from what
// configuration: "priority, gang, drf, then creation time, then UID
// (ConfigMap volcano-system/volcano-scheduler-configmap key ...)".
func (res *Result) OrderText() string {
	keys := append([]string(nil), res.order.Plugins...)
	keys = append(keys, "creation time", "UID")
	s := "order: " + strings.Join(keys, ", then ") + " (" + res.Config.Source + ")"
	if len(res.order.Disabled) > 0 {
		s += "; job order disabled for " + strings.Join(res.order.Disabled, ", ")
	}
	return s
}

// UnknownText is one line saying which enabled plugins order jobs in a
// way objects cannot tell ("" when none).
func (res *Result) UnknownText() string {
	if len(res.order.Unknown) == 0 {
		return ""
	}
	return fmt.Sprintf("not predicted: plugin(s) %s order jobs too, in a way this prediction does not model (tdm puts non-preemptable jobs first; a plugin Volcano does not ship is unknown); the scheduler's order may differ from this one",
		strings.Join(res.order.Unknown, ", "))
}

// Waited is how long a podgroup has waited, since its creation.
func Waited(e *Entry, now time.Time) time.Duration { return now.Sub(e.Created) }
