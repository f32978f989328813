package job

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/templates"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcprinters "github.com/kubectl-vc/kubectl-vc/pkg/cli/printers"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// waitingNote is how a pending job Command is shown.
const waitingNote = "waiting for a job controller (Volcano's; kubectl vc serve has none)"

// DescribeOptions holds the input of 'job describe'.
type DescribeOptions struct {
	genericiooptions.IOStreams
	Factory util.Factory
	Name    string

	namespace string
	client    versioned.Interface
	kube      kubernetes.Interface
}

func newDescribeCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DescribeOptions{IOStreams: streams, Factory: f}
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a job in detail",
		Long: templates.LongDesc(`
			Show a job's spec by task (replicas, minAvailable, images, requests), its
			lifecycle policies, its status and conditions, its PodGroup, its pods by task
			(pods labelled volcano.sh/job-name) with phase and node, the Commands still
			waiting for a job controller, and its events.`),
		Example: templates.Examples(`
			kubectl vc job describe train -n research`),
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: jobNames(f, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
}

// Complete records the name and resolves the namespace and the clients.
func (o *DescribeOptions) Complete(args []string) error {
	if len(args) == 0 {
		return util.UsageErrorf("name the job to describe, e.g. 'job describe train'")
	}
	o.Name = args[0]
	var err error
	if o.namespace, err = namespace(o.Factory); err != nil {
		return err
	}
	if o.client, err = o.Factory.VolcanoClient(); err != nil {
		return err
	}
	o.kube, err = o.Factory.KubeClient()
	return err
}

// Validate checks the name.
func (o *DescribeOptions) Validate() error { return validateName(o.Name) }

// Run prints the description. Only the job itself must be readable;
// related objects that cannot be listed are reported in place.
func (o *DescribeOptions) Run(ctx context.Context) error {
	jobs, err := getJobs(ctx, o.client, o.namespace, []string{o.Name})
	if err != nil {
		return err
	}
	j := jobs[0]
	w := tabwriter.NewWriter(o.Out, 0, 8, 2, ' ', 0)
	defer w.Flush()
	line := func(indent int, label string, value any) {
		fmt.Fprintf(w, "%s%s:\t%v\n", strings.Repeat("  ", indent), label, value)
	}
	line(0, "Name", j.Name)
	line(0, "Namespace", j.Namespace)
	line(0, "Labels", vcprinters.MapString(j.Labels))
	line(0, "Annotations", vcprinters.MapString(j.Annotations))
	line(0, "Created", j.CreationTimestamp.Format("2006-01-02T15:04:05Z07:00")+" ("+vcprinters.Age(j.CreationTimestamp)+" ago)")
	writeSpec(w, line, j)
	writeStatus(w, line, j)

	if pgs, err := o.client.SchedulingV1beta1().PodGroups(j.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		line(0, "PodGroup", "<cannot list: "+util.Message(err)+">")
	} else if pg := podGroupOf(j, pgs.Items); pg == nil {
		line(0, "PodGroup", "<none>")
	} else {
		phase := string(pg.Status.Phase)
		if phase == "" {
			phase = string(schedulingv1beta1.PodGroupPending)
		}
		line(0, "PodGroup", fmt.Sprintf("%s (%s, minMember %d, queue %s)", pg.Name, phase, pg.Spec.MinMember, vcprinters.OrNone(pg.Spec.Queue)))
	}

	pods, err := o.kube.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: batchv1alpha1.JobNameLabel + "=" + j.Name})
	if err != nil {
		line(0, "Pods", "<cannot list: "+util.Message(err)+">")
	} else {
		writePods(w, line, j, pods.Items)
	}

	if cmds, err := o.client.BusV1alpha1().Commands(j.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		line(0, "Pending Commands", "<cannot list: "+util.Message(err)+">")
	} else {
		var rows []string
		for i := range cmds.Items {
			cm := &cmds.Items[i]
			if targetsJob(cm, j) {
				rows = append(rows, fmt.Sprintf("  %s\t%s\t%s ago\t%s", cm.Name, cm.Action, vcprinters.Age(cm.CreationTimestamp), waitingNote))
			}
		}
		if len(rows) == 0 {
			line(0, "Pending Commands", "<none>")
		} else {
			fmt.Fprintln(w, "Pending Commands:")
			for _, r := range rows {
				fmt.Fprintln(w, r)
			}
		}
	}
	vcprinters.WriteEvents(ctx, w, o.kube, j.Namespace, "Job", j.Name, j.UID)
	return nil
}

type lineFunc func(indent int, label string, value any)

func writeSpec(w io.Writer, line lineFunc, j *batchv1alpha1.Job) {
	fmt.Fprintln(w, "Spec:")
	line(1, "Queue", queueOf(j))
	line(1, "Scheduler", vcprinters.OrNone(j.Spec.SchedulerName))
	line(1, "Min Available", minAvailable(j))
	if j.Spec.MinSuccess != nil {
		line(1, "Min Success", *j.Spec.MinSuccess)
	}
	line(1, "Max Retry", j.Spec.MaxRetry)
	line(1, "Priority Class", vcprinters.OrNone(j.Spec.PriorityClassName))
	if t := j.Spec.TTLSecondsAfterFinished; t != nil {
		line(1, "TTL After Finished", fmt.Sprintf("%ds", *t))
	}
	var plugins []string
	for name, args := range j.Spec.Plugins {
		if len(args) > 0 {
			name += " " + strings.Join(args, " ")
		}
		plugins = append(plugins, name)
	}
	sort.Strings(plugins)
	line(1, "Plugins", vcprinters.OrNone(strings.Join(plugins, ", ")))
	if nt := j.Spec.NetworkTopology; nt != nil {
		tier := "<none>"
		if nt.HighestTierAllowed != nil {
			tier = fmt.Sprint(*nt.HighestTierAllowed)
		}
		if nt.HighestTierName != "" {
			tier = nt.HighestTierName
		}
		line(1, "Network Topology", fmt.Sprintf("mode %s, highest tier %s", vcprinters.OrNone(string(nt.Mode)), tier))
	}
	fmt.Fprintln(w, "  Tasks:")
	fmt.Fprintln(w, "    Name\tReplicas\tMin Available\tImage\tRequests (per pod)")
	for i, t := range j.Spec.Tasks {
		minAv := fmt.Sprint(t.Replicas)
		if t.MinAvailable != nil {
			minAv = fmt.Sprint(*t.MinAvailable)
		}
		fmt.Fprintf(w, "    %s\t%d\t%s\t%s\t%s\n", taskName(t, i), t.Replicas, minAv,
			vcprinters.OrNone(images(t.Template.Spec)), vcprinters.OrNone(vcprinters.Resources(podRequests(t.Template.Spec))))
	}
	var policies []string
	for _, p := range j.Spec.Policies {
		policies = append(policies, fmt.Sprintf("    <job>\t%s\t%s", policyTrigger(p), p.Action))
	}
	for i, t := range j.Spec.Tasks {
		for _, p := range t.Policies {
			policies = append(policies, fmt.Sprintf("    %s\t%s\t%s", taskName(t, i), policyTrigger(p), p.Action))
		}
	}
	if len(policies) == 0 {
		line(1, "Policies", "<none>")
		return
	}
	fmt.Fprintln(w, "  Policies:")
	fmt.Fprintln(w, "    Scope\tWhen\tAction")
	for _, p := range policies {
		fmt.Fprintln(w, p)
	}
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

// podRequests sums the requests of a pod's containers.
func podRequests(spec corev1.PodSpec) corev1.ResourceList {
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

func writeStatus(w io.Writer, line lineFunc, j *batchv1alpha1.Job) {
	s := j.Status
	fmt.Fprintln(w, "Status:")
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
	fmt.Fprintln(w, "  Conditions:")
	fmt.Fprintln(w, "    Phase\tSince")
	for _, c := range s.Conditions {
		since := "<unknown>"
		if c.LastTransitionTime != nil {
			since = vcprinters.Age(*c.LastTransitionTime) + " ago"
		}
		fmt.Fprintf(w, "    %s\t%s\n", c.Status, since)
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

func writePods(w io.Writer, line lineFunc, j *batchv1alpha1.Job, pods []corev1.Pod) {
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
	fmt.Fprintln(w, "Pods:")
	fmt.Fprintln(w, "  Task\tName\tPhase\tNode")
	for _, p := range mine {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", vcprinters.OrNone(p.Labels[batchv1alpha1.TaskSpecLabel]), p.Name, podPhase(p), vcprinters.OrNone(p.Spec.NodeName))
	}
}

// targetsJob reports whether Command cm is for job j.
func targetsJob(cm *busv1alpha1.Command, j *batchv1alpha1.Job) bool {
	t := cm.TargetObject
	return t != nil && t.Kind == "Job" && t.APIVersion == batchv1alpha1.SchemeGroupVersion.String() &&
		t.Name == j.Name && (t.UID == "" || t.UID == j.UID)
}

// podPhase is the pod's phase, or Terminating once it is being deleted,
// as kubectl shows it.
func podPhase(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	return string(p.Status.Phase)
}
