package analysis

import (
	"fmt"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/leases"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
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

// checkGroup finds the object's PodGroup and checks it and its members;
// it returns nil when there is none.
func (a *analyzer) checkGroup() *schedulingv1beta1.PodGroup {
	s := a.s
	switch s.Kind {
	case PodGroup:
		a.checkMembers(s.PodGroup)
		return s.PodGroup
	case Job:
		pg := a.jobGroup()
		if pg == nil {
			a.missingJobGroup()
			return nil
		}
		a.ok("podgroup", "the job's PodGroup is %s (%s)", pg.Name, pgPhase(pg))
		a.checkMembers(pg)
		return pg
	}
	p := s.Pod
	obj := a.objectRef()
	name := p.Annotations[keys.KubeGroupName]
	if name == "" {
		if !a.isVolcano(orDefaultScheduler(p.Spec.SchedulerName)) {
			a.ok("podgroup", "the pod is not scheduled by Volcano (scheduler %q) and needs no PodGroup", orDefaultScheduler(p.Spec.SchedulerName))
			return nil
		}
		serve, serveEv := a.controller("serve", a.s.ServeLease, leases.Serve)
		volcano, volcanoEv := a.controller("Volcano's controllers", a.s.VolcanoControllerLease, leases.VolcanoControllers)
		ev := []string{fmt.Sprintf("pod/%s/%s has no %s annotation", p.Namespace, p.Name, keys.KubeGroupName), serveEv, volcanoEv}
		if !serve && !volcano {
			a.block(PodGroupControllerNotRunning, obj,
				"the pod waits for a PodGroup that a podgroup controller makes, and none runs (neither serve's nor Volcano's)",
				"run 'kubectl vc serve --leader-elect' (or 'kubectl vc install --serve'), or Volcano's controllers; or give the pod a PodGroup with the annotation "+keys.KubeGroupName, ev...)
		} else {
			a.block(PodGroupMissing, obj,
				"the pod has no PodGroup yet although a podgroup controller runs: it makes podgroup-<owner or pod UID> and annotates the pod",
				"look at the controller's Warning events and log (kubectl get events -n "+p.Namespace+")", ev...)
		}
		return nil
	}
	if pg := a.findGroup(p.Namespace, name); pg != nil {
		a.ok("podgroup", "the pod's PodGroup %s exists in its namespace (%s)", name, pgPhase(pg))
		a.checkMembers(pg)
		return pg
	}
	var elsewhere []string
	for i := range s.PodGroups {
		if g := &s.PodGroups[i]; g.Name == name && g.Namespace != p.Namespace {
			elsewhere = append(elsewhere, g.Namespace)
		}
	}
	ev := []string{fmt.Sprintf("pod/%s/%s annotation %s=%s", p.Namespace, p.Name, keys.KubeGroupName, name)}
	if len(elsewhere) > 0 {
		sort.Strings(elsewhere)
		ev = append(ev, fmt.Sprintf("podgroup %s exists in namespace %s, not in %s", name, strings.Join(elsewhere, ", "), p.Namespace))
		a.block(PodGroupInOtherNamespace, obj,
			fmt.Sprintf("the pod names PodGroup %s, which is in namespace %s: the scheduler looks for a pod's group in the pod's own namespace and never schedules it", name, strings.Join(elsewhere, ", ")),
			fmt.Sprintf("create PodGroup %s in namespace %s (or recreate the pod in %s)", name, p.Namespace, elsewhere[0]), ev...)
		return nil
	}
	ev = append(ev, fmt.Sprintf("no podgroup %s in any namespace", name))
	if p.Labels[batchv1alpha1.JobNameLabel] != "" {
		if running, cev := a.controller("Volcano's controllers", a.s.VolcanoControllerLease, leases.VolcanoControllers); !running {
			a.block(PodGroupControllerNotRunning, obj,
				fmt.Sprintf("the pod belongs to Volcano Job %s, whose PodGroup %s Volcano's job controller makes, and it is not running (serve has no job controller)", p.Labels[batchv1alpha1.JobNameLabel], name),
				"start Volcano's controllers (vc-controller-manager)", append(ev, cev)...)
			return nil
		}
	}
	a.block(PodGroupMissing, obj, fmt.Sprintf("the pod names PodGroup %s, which does not exist: the scheduler waits for it", name),
		fmt.Sprintf("create PodGroup %s in namespace %s, or recreate the pod without the %s annotation so a controller makes one", name, p.Namespace, keys.KubeGroupName), ev...)
	return nil
}

// missingJobGroup explains a Volcano Job without a PodGroup.
func (a *analyzer) missingJobGroup() {
	j := a.s.Job
	running, cev := a.controller("Volcano's controllers", a.s.VolcanoControllerLease, leases.VolcanoControllers)
	ev := []string{fmt.Sprintf("no podgroup of job %s in namespace %s (looked for one it controls, and %s-%s)", j.Name, j.Namespace, j.Name, j.UID), cev}
	if !running {
		a.block(PodGroupControllerNotRunning, a.objectRef(),
			"the job waits for its PodGroup and pods, which Volcano's job controller makes, and it is not running (kubectl vc serve has no job controller)",
			"start Volcano's controllers (vc-controller-manager)", ev...)
		return
	}
	a.block(PodGroupMissing, a.objectRef(), "the job has no PodGroup although Volcano's controllers run",
		fmt.Sprintf("look at the job's events ('kubectl vc job describe %s -n %s') and the controllers' log", j.Name, j.Namespace), ev...)
}

// controller says whether a controller manager runs, from its Lease.
func (a *analyzer) controller(who string, lease *coordinationv1.Lease, name string) (bool, string) {
	ns := a.s.ControllersNamespace
	if lease == nil {
		return false, fmt.Sprintf("%s: no Lease %s/%s", who, ns, name)
	}
	fresh, desc := leaseState(lease, a.s.Now)
	return fresh, fmt.Sprintf("%s: Lease %s/%s %s", who, ns, name, desc)
}

// jobGroup finds the job's PodGroup as Volcano's job controller names it:
// one it controls, else <job>-<uid>, else <job>.
func (a *analyzer) jobGroup() *schedulingv1beta1.PodGroup {
	j := a.s.Job
	if a.s.PodGroup != nil {
		return a.s.PodGroup
	}
	var byName *schedulingv1beta1.PodGroup
	for i := range a.s.PodGroups {
		pg := &a.s.PodGroups[i]
		if pg.Namespace != j.Namespace {
			continue
		}
		if ref := metav1.GetControllerOf(pg); ref != nil && ref.UID == j.UID {
			return pg
		}
		if pg.Name == j.Name+"-"+string(j.UID) || (byName == nil && pg.Name == j.Name) {
			byName = pg
		}
	}
	return byName
}

func (a *analyzer) findGroup(ns, name string) *schedulingv1beta1.PodGroup {
	if pg := a.s.PodGroup; pg != nil && pg.Namespace == ns && pg.Name == name {
		return pg
	}
	for i := range a.s.PodGroups {
		if pg := &a.s.PodGroups[i]; pg.Namespace == ns && pg.Name == name {
			return pg
		}
	}
	return nil
}

// livePods are the member pods that are neither finished nor deleted.
func (a *analyzer) livePods() []*corev1.Pod {
	var out []*corev1.Pod
	for i := range a.s.Pods {
		p := &a.s.Pods[i]
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			out = append(out, p)
		}
	}
	return out
}

// checkMembers: minMember must not be more than the pods that exist.
func (a *analyzer) checkMembers(pg *schedulingv1beta1.PodGroup) {
	live := a.livePods()
	n := int32(len(live))
	obj := groupRef(pg)
	if n >= pg.Spec.MinMember {
		a.ok("pods", "%d pod(s) of the group exist, minMember %d", n, pg.Spec.MinMember)
		return
	}
	var names []string
	for _, p := range live {
		names = append(names, p.Name)
	}
	ev := []string{fmt.Sprintf("%s spec.minMember=%d", obj, pg.Spec.MinMember),
		fmt.Sprintf("%d live pod(s) with %s=%s%s", n, keys.KubeGroupName, pg.Name, listSuffix(names, 5))}
	if isJobGroup(pg) && (pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending) {
		a.ok("pods", "%d of minMember %d pods exist: Volcano's job controller makes them once the scheduler has moved the PodGroup to Inqueue", n, pg.Spec.MinMember)
		return
	}
	a.block(NotEnoughPods, obj,
		fmt.Sprintf("minMember is %d but only %d pod(s) exist: the scheduler places none until all %d can be placed at once", pg.Spec.MinMember, n, pg.Spec.MinMember),
		fmt.Sprintf("create the missing %d pod(s), or lower minMember: kubectl patch podgroup %s -n %s --type merge -p '{\"spec\":{\"minMember\":%d}}'", pg.Spec.MinMember-n, pg.Name, pg.Namespace, n),
		ev...)
}

// isJobGroup reports whether Volcano's job controller owns the group.
func isJobGroup(pg *schedulingv1beta1.PodGroup) bool {
	ref := metav1.GetControllerOf(pg)
	return ref != nil && ref.Kind == "Job" && ref.APIVersion == batchv1alpha1.SchemeGroupVersion.String()
}

// queueName is the queue the object goes to.
func (a *analyzer) queueName(pg *schedulingv1beta1.PodGroup) string {
	s := a.s
	q := ""
	switch {
	case pg != nil:
		q = pg.Spec.Queue
	case s.Kind == Job:
		q = s.Job.Spec.Queue
	case s.Kind == Pod:
		q = s.Pod.Annotations[keys.QueueName]
		if q == "" {
			q = s.Pod.Annotations[keys.VolcanoQueueName]
		}
		if q == "" {
			q = s.Pod.Labels[batchv1alpha1.QueueNameLabel]
		}
	}
	return rules.QueueOf(q)
}

// checkQueue checks the queue: it exists, is Open, its ancestors are
// Open, and it is a leaf. It returns the queue when it exists.
func (a *analyzer) checkQueue(name string, relevant bool) *schedulingv1beta1.Queue {
	if !relevant && a.s.Kind == Pod && a.s.Pod.Annotations[keys.KubeGroupName] == "" && !a.isVolcano(orDefaultScheduler(a.s.Pod.Spec.SchedulerName)) {
		return nil
	}
	q := a.queues[name]
	obj := "queue/" + name
	if q == nil {
		a.block(QueueMissing, obj, fmt.Sprintf("queue %s does not exist: the scheduler does not consider work in it", name),
			fmt.Sprintf("kubectl vc queue create %s, or submit to a queue that exists ('kubectl vc queue list')", name),
			fmt.Sprintf("%s names queue %s", a.objectRef(), name))
		return nil
	}
	a.checkQueueState(q, obj)
	a.checkAncestors(q)
	if kids := a.children[q.Name]; len(kids) > 0 {
		a.block(QueueNotLeaf, obj, fmt.Sprintf("queue %s has child queues (%s): Volcano runs work in leaf queues only", q.Name, strings.Join(kids, ", ")),
			fmt.Sprintf("submit to one of its children (%s), or make a leaf queue for this work", strings.Join(kids, ", ")),
			fmt.Sprintf("queues with spec.parent=%s: %s", q.Name, strings.Join(kids, ", ")))
	} else {
		a.ok("queue", "queue %s is a leaf (parent %s)", q.Name, orNone(rules.EffectiveParent(q)))
	}
	if st := q.Status.State; st != schedulingv1beta1.QueueStateClosed && st != schedulingv1beta1.QueueStateClosing && st != schedulingv1beta1.QueueStateUnknown {
		a.ok("queue-state", "queue %s is %s", q.Name, queueState(q))
	}
	return q
}

// checkQueueState reports a Closed or Closing queue, and who closed it.
func (a *analyzer) checkQueueState(q *schedulingv1beta1.Queue, obj string) {
	st := q.Status.State
	if st != schedulingv1beta1.QueueStateClosed && st != schedulingv1beta1.QueueStateClosing {
		if st == schedulingv1beta1.QueueStateUnknown {
			a.note(QueueClosed, obj, fmt.Sprintf("queue %s is in state Unknown: the queue controller cannot tell its state", q.Name),
				"see 'kubectl vc doctor' and the queue controller's log", fmt.Sprintf("queue/%s status.state=Unknown", q.Name))
		}
		return
	}
	ev := []string{fmt.Sprintf("queue/%s status.state=%s", q.Name, st)}
	who := a.closedBy(q, &ev)
	msg := fmt.Sprintf("queue %s is %s%s: the scheduler places no new work in it", q.Name, st, who)
	fix := "kubectl vc queue open " + q.Name
	if q.Annotations[keys.ClosedByParent] == "true" {
		fix = "kubectl vc queue open " + rules.EffectiveParent(q) + " (opening the parent re-opens the children it closed)"
	}
	r := a.block(QueueClosed, obj, msg, fix, ev...)
	if st == schedulingv1beta1.QueueStateClosing {
		if stale := a.stale(q.Name); len(stale) > 0 {
			r.Evidence = append(r.Evidence, fmt.Sprintf("it stays Closing while it has podgroups, %d of them finished: %s", len(stale), strings.Join(stale, ", ")))
		}
	}
}

// closedBy says who closed a queue: its parent (the closed-by-parent
// annotation), a CloseQueue Command still pending, or the latest event.
func (a *analyzer) closedBy(q *schedulingv1beta1.Queue, ev *[]string) string {
	who := ""
	if q.Annotations[keys.ClosedByParent] == "true" {
		who = fmt.Sprintf(", closed by its parent %s", rules.EffectiveParent(q))
		*ev = append(*ev, fmt.Sprintf("queue/%s annotation %s=true", q.Name, keys.ClosedByParent))
	}
	for i := range a.s.Commands {
		c := &a.s.Commands[i]
		if t := c.TargetObject; t != nil && t.Kind == "Queue" && t.Name == q.Name {
			*ev = append(*ev, fmt.Sprintf("Command %s/%s action %s created %s ago, not applied yet", c.Namespace, c.Name, c.Action, human(a.s.Now.Sub(c.CreationTimestamp.Time))))
			if who == "" && c.Action == "CloseQueue" {
				who = fmt.Sprintf(", by Command %s/%s", c.Namespace, c.Name)
			}
		}
	}
	var last *corev1.Event
	for i := range a.s.Events {
		e := &a.s.Events[i]
		if e.InvolvedObject.Kind != "Queue" || e.InvolvedObject.Name != q.Name {
			continue
		}
		if e.Reason != "CloseQueue" && e.Reason != "StateChanged" {
			continue
		}
		if last == nil || EventTime(e).After(EventTime(last)) {
			last = e
		}
	}
	if last != nil {
		*ev = append(*ev, fmt.Sprintf("event %s %q from %s %s ago", last.Reason, last.Message, eventSource(last), human(a.s.Now.Sub(EventTime(last)))))
		if who == "" && last.Reason == "CloseQueue" {
			who = ", by a CloseQueue Command (applied and deleted)"
		}
	}
	return who
}

// checkAncestors reports a Closed or Closing queue above q.
func (a *analyzer) checkAncestors(q *schedulingv1beta1.Queue) {
	seen := map[string]bool{q.Name: true}
	for p := a.queues[rules.EffectiveParent(q)]; p != nil && !seen[p.Name]; p = a.queues[rules.EffectiveParent(p)] {
		seen[p.Name] = true
		if st := p.Status.State; st == schedulingv1beta1.QueueStateClosed || st == schedulingv1beta1.QueueStateClosing {
			ev := []string{fmt.Sprintf("queue/%s status.state=%s", p.Name, st)}
			who := a.closedBy(p, &ev)
			a.block(ParentQueueClosed, "queue/"+p.Name, fmt.Sprintf("queue %s above %s is %s%s: nothing below it runs", p.Name, q.Name, st, who),
				"kubectl vc queue open "+p.Name, ev...)
		}
	}
}

// stale lists the podgroups of a queue that are finished but still
// counted: Completed ones holding minResources, and Inqueue or Running
// ones whose pods have all finished.
func (a *analyzer) stale(queue string) []string {
	var out []string
	for i := range a.s.PodGroups {
		pg := &a.s.PodGroups[i]
		if pgQueue(pg) != queue {
			continue
		}
		if isStale(pg) {
			out = append(out, fmt.Sprintf("%s/%s (%s)", pg.Namespace, pg.Name, pgPhase(pg)))
		}
	}
	sort.Strings(out)
	return out
}

func isStale(pg *schedulingv1beta1.PodGroup) bool {
	switch pg.Status.Phase {
	case schedulingv1beta1.PodGroupCompleted:
		return pg.Spec.MinResources != nil
	case schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupRunning:
		done := pg.Status.Succeeded + pg.Status.Failed
		return pg.Status.Running == 0 && done > 0 && done >= pg.Spec.MinMember
	}
	return false
}

func (a *analyzer) objectRef() string {
	s := a.s
	switch s.Kind {
	case Queue:
		return "queue/" + s.Name
	}
	return string(s.Kind) + "/" + s.Namespace + "/" + s.Name
}

func groupRef(pg *schedulingv1beta1.PodGroup) string {
	return "podgroup/" + pg.Namespace + "/" + pg.Name
}

func pgPhase(pg *schedulingv1beta1.PodGroup) string {
	if pg.Status.Phase == "" {
		return string(schedulingv1beta1.PodGroupPending)
	}
	return string(pg.Status.Phase)
}

func pgQueue(pg *schedulingv1beta1.PodGroup) string { return rules.QueueOf(pg.Spec.Queue) }

func queueState(q *schedulingv1beta1.Queue) string {
	if q.Status.State == "" {
		return "Open (no status yet)"
	}
	return string(q.Status.State)
}

func orPending(s string) string {
	if s == "" {
		return "Pending"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func listSuffix(names []string, n int) string {
	if len(names) == 0 {
		return ""
	}
	if len(names) <= n {
		return ": " + strings.Join(names, ", ")
	}
	return fmt.Sprintf(": %s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// SchedulerNames are the schedulers the pods of s use (the pods', else the
// job's, else Volcano's first name): what the command probes for.
func SchedulerNames(s *Snapshot) []string {
	a := &analyzer{s: s}
	return a.schedulerNames()
}
