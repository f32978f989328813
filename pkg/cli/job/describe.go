package job

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/jobspec"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
)

// waitingNote is how a pending job Command is shown.
const waitingNote = "waiting for a job controller (Volcano's; kubectl vc serve has none)"

// describeHelp is the help of 'job describe'.
var describeHelp = kind.Help{
	Short: "Show a job in detail",
	Long: `
			Show a job's spec by task (replicas, minAvailable, images, requests), its
			lifecycle policies, its status and conditions, its PodGroup, its pods by task
			(pods labelled volcano.sh/job-name) with phase and node, the Commands still
			waiting for a job controller, and its events.`,
	Example: `
			kubectl vc job describe train -n research`,
}

// describeJob writes a job's spec and status, its PodGroup, its pods by
// task and the Commands still waiting for a job controller. Related
// objects that cannot be listed are reported in place.
func describeJob(ctx context.Context, o *vcprinters.DescribeOptions, d *vcprinters.Describer, j *batchv1alpha1.Job) {
	line := d.Line
	writeSpec(d, j)
	writeStatus(d, j)

	if pgs, err := o.Client.SchedulingV1beta1().PodGroups(j.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		d.CannotList(0, "PodGroup", err)
	} else if pg := podGroupOf(j, pgs.Items); pg == nil {
		line(0, "PodGroup", "<none>")
	} else {
		phase := string(pg.Status.Phase)
		if phase == "" {
			phase = string(schedulingv1beta1.PodGroupPending)
		}
		line(0, "PodGroup", fmt.Sprintf("%s (%s, minMember %d, queue %s)", pg.Name, phase, pg.Spec.MinMember, vcprinters.OrNone(pg.Spec.Queue)))
	}

	pods, err := o.Kube.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameLabel + "=" + j.Name})
	if err != nil {
		d.CannotList(0, "Pods", err)
	} else {
		writePods(d, j, pods.Items)
	}

	if cmds, err := o.Client.BusV1alpha1().Commands(j.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		d.CannotList(0, "Pending Commands", err)
	} else {
		var rows []string
		for i := range cmds.Items {
			cm := &cmds.Items[i]
			if targetsJob(cm, j) {
				rows = append(rows, fmt.Sprintf("%s\t%s\t%s ago\t%s", cm.Name, cm.Action, vcprinters.Age(cm.CreationTimestamp), waitingNote))
			}
		}
		d.Table(0, "Pending Commands", "", rows)
	}
}

func writeSpec(d *vcprinters.Describer, j *batchv1alpha1.Job) {
	jobspec.WriteSpec(d, &j.Spec, minAvailable(j))
}

func writeStatus(d *vcprinters.Describer, j *batchv1alpha1.Job) {
	line := d.Line
	s := j.Status
	d.Section(0, "Status")
	phase := string(phaseOf(j))
	if s.State.Phase == "" {
		phase += " (no status written yet)"
	}
	line(1, "Phase", phase)
	if s.State.Reason != "" || s.State.Message != "" {
		line(1, "Reason", vcprinters.OrNone(s.State.Reason))
		line(1, "Message", vcprinters.OrNone(s.State.Message))
	}
	if !s.State.LastTransitionTime.IsZero() {
		line(1, "Last Transition", vcprinters.Age(s.State.LastTransitionTime)+" ago")
	}
	line(1, "Pods", fmt.Sprintf("pending %d, running %d, succeeded %d, failed %d, terminating %d, unknown %d",
		s.Pending, s.Running, s.Succeeded, s.Failed, s.Terminating, s.Unknown))
	line(1, "Retries", fmt.Sprintf("%d of %d", s.RetryCount, j.Spec.MaxRetry))
	line(1, "Version", s.Version)
	if s.RunningDuration != nil {
		line(1, "Running Duration", s.RunningDuration.Duration.String())
	}
	if len(s.ControlledResources) > 0 {
		line(1, "Controlled Resources", vcprinters.MapString(s.ControlledResources))
	}
	if len(s.Conditions) == 0 {
		line(1, "Conditions", "<none>")
		return
	}
	d.Section(1, "Conditions")
	d.Write(2, "Phase\tSince\n")
	for _, c := range s.Conditions {
		since := "<unknown>"
		if c.LastTransitionTime != nil {
			since = vcprinters.Age(*c.LastTransitionTime) + " ago"
		}
		d.Write(2, "%s\t%s\n", c.Status, since)
	}
}

// podGroupOf finds the job's PodGroup among those of its namespace: the
// one it controls, else the one named as Volcano's job controller names
// it (<job>-<uid>, or <job> in older releases).
func podGroupOf(j *batchv1alpha1.Job, pgs []schedulingv1beta1.PodGroup) *schedulingv1beta1.PodGroup {
	var byName *schedulingv1beta1.PodGroup
	for i := range pgs {
		pg := &pgs[i]
		if ref := metav1.GetControllerOf(pg); ref != nil && ref.UID == j.UID {
			return pg
		}
		if pg.Name == j.Name+"-"+string(j.UID) || (byName == nil && pg.Name == j.Name) {
			byName = pg
		}
	}
	return byName
}

// ownedBy reports whether pod belongs to job j: made for it by the job
// controller (a pod left from an earlier job of the same name is not).
func ownedBy(pod *corev1.Pod, j *batchv1alpha1.Job) bool {
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" && ref.APIVersion == batchv1alpha1.SchemeGroupVersion.String() {
		return ref.UID == j.UID
	}
	return pod.Labels[batchv1alpha1.JobNameLabel] == j.Name
}

func writePods(d *vcprinters.Describer, j *batchv1alpha1.Job, pods []corev1.Pod) {
	line := d.Line
	var mine []*corev1.Pod
	for i := range pods {
		if ownedBy(&pods[i], j) {
			mine = append(mine, &pods[i])
		}
	}
	if len(mine) == 0 {
		line(0, "Pods", "<none>")
		return
	}
	sort.Slice(mine, func(a, b int) bool {
		ta, tb := mine[a].Labels[batchv1alpha1.TaskSpecLabel], mine[b].Labels[batchv1alpha1.TaskSpecLabel]
		if ta != tb {
			return ta < tb
		}
		return mine[a].Name < mine[b].Name
	})
	d.Section(0, "Pods")
	d.Write(1, "Task\tName\tPhase\tNode\n")
	for _, p := range mine {
		d.Write(1, "%s\t%s\t%s\t%s\n", vcprinters.OrNone(p.Labels[batchv1alpha1.TaskSpecLabel]), p.Name, vcprinters.PodPhase(p), vcprinters.OrNone(p.Spec.NodeName))
	}
}

// targetsJob reports whether Command cm is for job j.
func targetsJob(cm *busv1alpha1.Command, j *batchv1alpha1.Job) bool {
	t := cm.TargetObject
	return t != nil && t.Kind == "Job" && t.APIVersion == batchv1alpha1.SchemeGroupVersion.String() &&
		t.Name == j.Name && (t.UID == "" || t.UID == j.UID)
}
