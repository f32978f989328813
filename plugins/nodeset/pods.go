package nodeset

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// selectorLabels select the pods, revisions, Service and PodDisruptionBudget
// of one NodeSet (Slinky's worker labels).
func selectorLabels(ns *slinkyv1beta1.NodeSet) map[string]string {
	return map[string]string{
		slinkyv1beta1.LabelAppName:     slinkyv1beta1.AppName,
		slinkyv1beta1.LabelAppInstance: ns.Name,
	}
}

func selectorOf(ns *slinkyv1beta1.NodeSet) labels.Selector {
	return labels.SelectorFromSet(selectorLabels(ns))
}

// podName is "<nodeset>-<ordinal>", the ordinal zero-padded to ordinalPadding digits.
// A padding wider than a hostname is refused (checkSpec) before any pod is
// named; the bound here keeps a name's cost to a hostname's whatever
// calls it.
func podName(ns *slinkyv1beta1.NodeSet, ordinal int) string {
	return fmt.Sprintf("%s-%0*d", ns.Name, min(max(ns.Spec.OrdinalPadding, 0), validation.DNS1123LabelMaxLength), ordinal)
}

// ordinalOf parses the ordinal of a pod named after ns; -1 if it is not.
func ordinalOf(ns *slinkyv1beta1.NodeSet, pod *corev1.Pod) int {
	rest, ok := strings.CutPrefix(pod.Name, ns.Name+"-")
	if !ok || rest == "" {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || strconv.Itoa(n) != strings.TrimLeft(rest, "0") && n != 0 {
		return -1
	}
	return n
}

// newPod builds the pod of ordinal from the NodeSet's template and base
// (slurmdpod.go; nil: the template as written), labelled with the hash of
// its revision.
func newPod(ns *slinkyv1beta1.NodeSet, base *podBase, ordinal int, revisionHash string) *corev1.Pod {
	name := podName(ns, ordinal)
	// The ordinal as it is in the name: padded to ordinalPadding digits.
	index := strings.TrimPrefix(name, ns.Name+"-")
	return renderPod(ns, base, revisionHash, func(pod *corev1.Pod) {
		pod.Name = name
		pod.Labels[slinkyv1beta1.LabelPodIndex] = index
		pod.Labels[slinkyv1beta1.LabelScalingMode] = string(slinkyv1beta1.ScalingModeStatefulSet)
		// The hostname is the Slurm node name: the pod's name, or, as
		// Slinky's operator makes it, the template's hostname followed by
		// the padded ordinal (its chart sets "<nodeset key>-").
		if pod.Spec.Hostname != "" {
			pod.Spec.Hostname += index
		} else {
			pod.Spec.Hostname = name
		}
	})
}

// renderPod builds a pod from the NodeSet's template, labelled with the
// hash of its revision; identity gives it its name, scaling mode and
// hostname (StatefulSet mode: by ordinal, newPod; DaemonSet mode: by
// Kubernetes node, newDaemonPod).
func renderPod(ns *slinkyv1beta1.NodeSet, base *podBase, revisionHash string, identity func(*corev1.Pod)) *corev1.Pod {
	spec, based := podSpecOf(ns, base) // slurmdpod.go
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ns.Namespace,
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)},
		},
		Spec: spec,
	}
	// As Slinky's operator: the NodeSet's own labels and annotations, then
	// the template's, then the worker labels; kubectl's last-applied
	// configuration describes the NodeSet, not the pod, and is left out.
	for k, v := range ns.Labels {
		pod.Labels[k] = v
	}
	for k, v := range ns.Annotations {
		if k != corev1.LastAppliedConfigAnnotation {
			pod.Annotations[k] = v
		}
	}
	for k, v := range ns.Spec.Template.PodMetadata.Labels {
		pod.Labels[k] = v
	}
	for k, v := range ns.Spec.Template.PodMetadata.Annotations {
		pod.Annotations[k] = v
	}
	for k, v := range selectorLabels(ns) {
		pod.Labels[k] = v
	}
	pod.Labels[slinkyv1beta1.LabelAppComponent] = slinkyv1beta1.AppComponent
	pod.Labels[slinkyv1beta1.LabelCluster] = ns.Spec.ControllerRef.Name
	// Made by serve (owned.go).
	pod.Labels[keys.LabelManagedBy] = keys.ServeName
	pod.Annotations[slinkyv1beta1.AnnotationDefaultContainer] = slurmdName(ns)
	pod.Labels[slinkyv1beta1.LabelRevisionHash] = revisionHash
	identity(pod)
	name := pod.Name
	pod.Labels[slinkyv1beta1.LabelPodName] = name
	pod.Labels[slinkyv1beta1.LabelPodHostname] = slinkyv1beta1.SlurmNodeName(pod)
	// The subdomain is the headless Service, so slurmctld can resolve
	// <host>.<nodeset>.<namespace>.
	pod.Spec.Subdomain = serviceName(ns)

	// One slurmd pod per Kubernetes node, unless oversubscribeNode (as
	// Slinky's operator: a required anti-affinity to every slurmd pod).
	if !ns.Spec.OversubscribeNode {
		addSlurmdAntiAffinity(&pod.Spec)
	}
	// Each claim template gives the pod a claim of its own (claimName);
	// its volume replaces a template volume of that name.
	for _, t := range ns.Spec.VolumeClaimTemplates {
		v := corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(ns, t.Name, pod)}}}
		pod.Spec.Volumes = append(slices.DeleteFunc(pod.Spec.Volumes, func(x corev1.Volume) bool { return x.Name == t.Name }), v)
	}

	// The slurmd container comes from spec.slurmd and goes first, unless
	// the template already has a container of that name; with a known
	// Controller it and the pod's base are the operator's (slurmdpod.go).
	slurmd := *ns.Spec.Slurmd.DeepCopy()
	slurmd.Name = slurmdName(ns)
	if !based && slurmd.Image != "" {
		found := false
		for _, c := range pod.Spec.Containers {
			found = found || c.Name == slurmd.Name
		}
		if !found {
			if ns.Spec.ExtraConf != "" {
				slurmd.Args = append(slurmd.Args, "--conf", ns.Spec.ExtraConf)
			}
			pod.Spec.Containers = append([]corev1.Container{slurmd}, pod.Spec.Containers...)
		}
	}
	addLogfile(ns, &pod.Spec, slurmd.Name) // logfile.go
	addSSH(ns, pod)                        // ssh.go
	return pod
}

func serviceName(ns *slinkyv1beta1.NodeSet) string { return ns.Name }

// slurmdName is the name of the slurmd container: spec.slurmd's, or
// "slurmd".
func slurmdName(ns *slinkyv1beta1.NodeSet) string {
	if ns.Spec.Slurmd.Name != "" {
		return ns.Spec.Slurmd.Name
	}
	return slinkyv1beta1.AppName
}

// claimName is the name of the claim of a pod made from a claim template,
// as Slinky's operator names it: <template>-<nodeset>-<ordinal> (the
// pod's name) in StatefulSet mode; <template>-<nodeset>-<hostname> in
// DaemonSet mode, whose pod names are random: the claim is the Kubernetes
// node's, found again by the pod made again there. The hostname is read
// from the pod's spec, which no one can change, not from its label.
func claimName(ns *slinkyv1beta1.NodeSet, template string, pod *corev1.Pod) string {
	if isDaemonPod(pod) {
		return template + "-" + ns.Name + "-" + pod.Spec.Hostname
	}
	return template + "-" + pod.Name
}

// addSlurmdAntiAffinity keeps the pod off Kubernetes nodes that run a
// slurmd pod already.
func addSlurmdAntiAffinity(spec *corev1.PodSpec) {
	term := corev1.PodAffinityTerm{
		TopologyKey: corev1.LabelHostname,
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: slinkyv1beta1.LabelAppName, Operator: metav1.LabelSelectorOpIn, Values: []string{slinkyv1beta1.AppName}}}},
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.PodAntiAffinity == nil {
		spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	aa := spec.Affinity.PodAntiAffinity
	aa.RequiredDuringSchedulingIgnoredDuringExecution = append(aa.RequiredDuringSchedulingIgnoredDuringExecution, term)
}

func isCordoned(pod *corev1.Pod) bool {
	v, ok := pod.Annotations[slinkyv1beta1.AnnotationPodCordon]
	return ok && v != "false"
}

func isTerminating(pod *corev1.Pod) bool { return pod.DeletionTimestamp != nil }

func isFinished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
}

func readyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func isReady(pod *corev1.Pod) bool {
	c := readyCondition(pod)
	return pod.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue
}

// isAvailable: ready for at least minReadySeconds.
func isAvailable(pod *corev1.Pod, minReady int32, now time.Time) bool {
	if !isReady(pod) || isTerminating(pod) {
		return false
	}
	if minReady <= 0 {
		return true
	}
	c := readyCondition(pod)
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(time.Duration(minReady)*time.Second).Before(now)
}

// sortByOrdinal orders pods by ordinal, lowest first.
func sortByOrdinal(ns *slinkyv1beta1.NodeSet, pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return ordinalOf(ns, pods[i]) < ordinalOf(ns, pods[j]) })
}

// lowestFreeOrdinals returns n ordinals not used by pods, lowest first.
func lowestFreeOrdinals(ns *slinkyv1beta1.NodeSet, pods []*corev1.Pod, n int) []int {
	used := map[int]bool{}
	for _, p := range pods {
		used[ordinalOf(ns, p)] = true
	}
	var out []int
	for i := 0; len(out) < n; i++ {
		if !used[i] {
			out = append(out, i)
		}
	}
	return out
}
