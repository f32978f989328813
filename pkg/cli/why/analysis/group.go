package analysis

// Has the object a PodGroup, and is it satisfiable? The group as Volcano's
// job controller names it, whether that controller (or serve) runs when it is
// missing, and whether minMember fits the pods that exist.

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
)

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
