// Package jobspec writes a Volcano Job's spec as describe and list show
// it: shared by the job kind and the jobtemplate kind, whose object holds
// a Job's spec, so that neither kind imports the other.
package jobspec

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// WriteSpec writes a job spec's section (a Job's, or a JobTemplate's):
// queue, scheduler, minAvailable (as the caller reckons it), retries,
// plugins, tasks and policies.
func WriteSpec(d *vcprinters.Describer, spec *batchv1alpha1.JobSpec, minAvail int32) {
	line := d.Line
	d.Section(0, "Spec")
	line(1, "Queue", rules.QueueOf(spec.Queue))
	line(1, "Scheduler", vcprinters.OrNone(spec.SchedulerName))
	line(1, "Min Available", minAvail)
	if spec.MinSuccess != nil {
		line(1, "Min Success", *spec.MinSuccess)
	}
	line(1, "Max Retry", spec.MaxRetry)
	line(1, "Priority Class", vcprinters.OrNone(spec.PriorityClassName))
	if t := spec.TTLSecondsAfterFinished; t != nil {
		line(1, "TTL After Finished", fmt.Sprintf("%ds", *t))
	}
	var plugins []string
	for name, args := range spec.Plugins {
		if len(args) > 0 {
			name += " " + strings.Join(args, " ")
		}
		plugins = append(plugins, name)
	}
	sort.Strings(plugins)
	line(1, "Plugins", vcprinters.OrNone(strings.Join(plugins, ", ")))
	if nt := spec.NetworkTopology; nt != nil {
		tier := "<none>"
		if nt.HighestTierAllowed != nil {
			tier = fmt.Sprint(*nt.HighestTierAllowed)
		}
		if nt.HighestTierName != "" {
			tier = nt.HighestTierName
		}
		line(1, "Network Topology", fmt.Sprintf("mode %s, highest tier %s", vcprinters.OrNone(string(nt.Mode)), tier))
	}
	d.Section(1, "Tasks")
	d.Write(2, "Name\tReplicas\tMin Available\tImage\tRequests (per pod)\n")
	for i, t := range spec.Tasks {
		minAv := fmt.Sprint(t.Replicas)
		if t.MinAvailable != nil {
			minAv = fmt.Sprint(*t.MinAvailable)
		}
		d.Write(2, "%s\t%d\t%s\t%s\t%s\n", TaskName(t, i), t.Replicas, minAv,
			vcprinters.OrNone(images(t.Template.Spec)), vcprinters.OrNone(vcprinters.Resources(PodRequests(t.Template.Spec))))
	}
	var policies []string
	for _, p := range spec.Policies {
		policies = append(policies, fmt.Sprintf("<job>\t%s\t%s", policyTrigger(p), p.Action))
	}
	for i, t := range spec.Tasks {
		for _, p := range t.Policies {
			policies = append(policies, fmt.Sprintf("%s\t%s\t%s", TaskName(t, i), policyTrigger(p), p.Action))
		}
	}
	d.Table(1, "Policies", "Scope\tWhen\tAction", policies)
}

// policyTrigger says when a lifecycle policy applies.
func policyTrigger(p batchv1alpha1.LifecyclePolicy) string {
	var when []string
	if p.Event != "" {
		when = append(when, string(p.Event))
	}
	for _, e := range p.Events {
		when = append(when, string(e))
	}
	if p.ExitCode != nil {
		when = append(when, fmt.Sprintf("exit code %d", *p.ExitCode))
	}
	s := vcprinters.OrNone(strings.Join(when, ","))
	if p.Timeout != nil {
		s += " after " + p.Timeout.Duration.String()
	}
	return s
}

// images lists the images of a pod's containers.
func images(spec corev1.PodSpec) string {
	var out []string
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return strings.Join(out, ",")
}

// PodRequests sums the requests of a pod's containers.
func PodRequests(spec corev1.PodSpec) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		for name, q := range c.Resources.Requests {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	return sum
}

// Tasks lists tasks as name=replicas, in spec order (also a JobTemplate's).
func Tasks(tasks []batchv1alpha1.TaskSpec) string {
	parts := make([]string, 0, len(tasks))
	for i, t := range tasks {
		parts = append(parts, fmt.Sprintf("%s=%d", TaskName(t, i), t.Replicas))
	}
	return strings.Join(parts, ",")
}

// TaskName is the task's name, or the one Volcano gives an unnamed task.
func TaskName(t batchv1alpha1.TaskSpec, index int) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("default%d", index)
}
