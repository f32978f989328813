package podgroup

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// GroupNamePrefix starts the name of every PodGroup this controller makes.
// Volcano's job controller uses the same prefix, which is why the suffix is
// always a UID: the two can never collide.
const GroupNamePrefix = "podgroup-"

// GroupName is the PodGroup a pod belongs to: one group per controller owner
// (so the replicas of a workload are gang-scheduled together), else one group
// per pod.
func GroupName(pod *corev1.Pod) string {
	if ref := metav1.GetControllerOf(pod); ref != nil {
		return GroupNamePrefix + string(ref.UID)
	}
	return GroupNamePrefix + string(pod.UID)
}

// ownerReferences are the owners of a pod's group. A controlled pod's group
// shares the pod's owners, so it is garbage-collected with the workload and
// not with any one replica; a bare pod owns its group.
func ownerReferences(pod *corev1.Pod) []metav1.OwnerReference {
	if metav1.GetControllerOf(pod) != nil {
		out := make([]metav1.OwnerReference, len(pod.OwnerReferences))
		for i := range pod.OwnerReferences {
			pod.OwnerReferences[i].DeepCopyInto(&out[i])
		}
		return out
	}
	return []metav1.OwnerReference{*metav1.NewControllerRef(pod, corev1.SchemeGroupVersion.WithKind("Pod"))}
}

// Names of the quota usage that Kubernetes' resource quota evaluator gives a
// pod and that Volcano writes into minResources.
const (
	countPods         corev1.ResourceName = "count/pods"
	requestsPrefix                        = corev1.DefaultResourceRequestsPrefix // "requests."
	hugePagesPrefix                       = corev1.ResourceHugePagesPrefix       // "hugepages-"
	kubernetesIOInfix                     = "kubernetes.io/"
)

// QuotaUsage is what one pod counts for in a ResourceQuota, with the keys
// Volcano's controller writes: Kubernetes' pod usage (count/pods, pods, cpu
// and requests.cpu, memory and requests.memory, ephemeral storage, limits.*
// where limits are set, hugepages bare and prefixed, extended resources as
// requests.<name>) and then, as Volcano does, every non-zero requests.<name>
// also under its bare name (so nvidia.com/gpu appears next to
// requests.nvidia.com/gpu). Requests and limits come from component-helpers,
// which knows init containers, restartable sidecars, pod-level resources and
// overhead; there is no arithmetic of our own on containers here.
func QuotaUsage(pod *corev1.Pod, now time.Time) corev1.ResourceList {
	usage := corev1.ResourceList{countPods: *resource.NewQuantity(1, resource.DecimalSI)}
	if !chargedForQuota(pod, now) {
		return usage
	}
	// In-place resize is GA: for a running pod the resources in its status
	// are what it holds. A pending pod (the usual case here) has none.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true}
	requests := resourcehelper.PodRequests(pod, opts)
	limits := resourcehelper.PodLimits(pod, opts)

	usage[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	pair := func(bare, req, lim corev1.ResourceName) {
		if q, ok := requests[bare]; ok {
			usage[bare] = q
			usage[req] = q
		}
		if q, ok := limits[bare]; ok {
			usage[lim] = q
		}
	}
	pair(corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU)
	pair(corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory)
	pair(corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage)
	for name, q := range requests {
		if strings.HasPrefix(string(name), hugePagesPrefix) {
			usage[name] = q
			usage[requestsPrefix+name] = q
		}
		if isExtendedResource(name) {
			usage[requestsPrefix+name] = q
		}
	}
	// Volcano's own step on top of the quota evaluator.
	for name, q := range usage {
		if !q.IsZero() && strings.HasPrefix(string(name), requestsPrefix) {
			usage[corev1.ResourceName(strings.TrimPrefix(string(name), requestsPrefix))] = q
		}
	}
	return usage
}

// chargedForQuota mirrors the quota evaluator: terminal pods, and pods
// whose deletion grace period has run out, hold no compute resources.
func chargedForQuota(pod *corev1.Pod, now time.Time) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil {
		grace := time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
		if now.After(pod.DeletionTimestamp.Add(grace)) {
			return false
		}
	}
	return true
}

// isExtendedResource is Kubernetes' rule: a domain-qualified name outside
// kubernetes.io that stays a qualified name once "requests." is put in front.
func isExtendedResource(name corev1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, kubernetesIOInfix) || strings.HasPrefix(s, requestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(requestsPrefix+s)) == 0
}

// MinResources is minMember times the pod's quota usage. It multiplies
// rather than adding minMember times as Volcano does (same values): the
// count comes from a user's annotation and may be as large as MaxInt32,
// which must not stall a worker.
func MinResources(pod *corev1.Pod, minMember int32, now time.Time) corev1.ResourceList {
	out := corev1.ResourceList{}
	if minMember <= 0 {
		return out
	}
	n := inf.NewDec(int64(minMember), 0)
	for name, q := range QuotaUsage(pod, now) {
		product := new(inf.Dec).Mul(q.AsDec(), n)
		out[name] = *resource.NewDecimalQuantity(*product, q.Format)
	}
	return out
}

// MinMember reads scheduling.volcano.sh/group-min-member from the owners'
// annotations; anything that is not a non-negative integer means 1.
func MinMember(upper map[string]string) int32 {
	s, ok := upper[keys.GroupMinMember]
	if !ok {
		return 1
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil || v < 0 {
		return 1
	}
	return int32(v)
}

// Problem is something wrong in a pod's annotations that the group was
// built around; the controller turns each into a Warning event on the pod.
type Problem struct {
	Reason, Message string
}

// NetworkTopology reads the topology annotations of a pod. No annotation
// means no constraint; the mode is read without regard to case, as Volcano
// reads it ("Soft" is soft), and written in its canonical lower case; an
// unknown mode falls back to hard (the safe reading) and a tier that is not
// an integer is ignored, each with a Problem.
func NetworkTopology(pod *corev1.Pod) (*v1beta1.NetworkTopologySpec, []Problem) {
	mode, hasMode := pod.Annotations[keys.NetworkTopologyMode]
	tier, hasTier := pod.Annotations[keys.NetworkTopologyHighestTier]
	if !hasMode && !hasTier {
		return nil, nil
	}
	var problems []Problem
	spec := &v1beta1.NetworkTopologySpec{Mode: v1beta1.HardNetworkTopologyMode}
	if hasMode {
		switch m := v1beta1.NetworkTopologyMode(strings.ToLower(mode)); m {
		case v1beta1.HardNetworkTopologyMode, v1beta1.SoftNetworkTopologyMode:
			spec.Mode = m
		default:
			problems = append(problems, Problem{"InvalidNetworkTopology",
				fmt.Sprintf("annotation %s=%q is neither %q nor %q; using %q", keys.NetworkTopologyMode, mode,
					v1beta1.HardNetworkTopologyMode, v1beta1.SoftNetworkTopologyMode, v1beta1.HardNetworkTopologyMode)})
		}
	}
	if hasTier {
		// The CRD refuses a negative tier, so one is ignored like garbage
		// rather than leaving the pod without a group forever.
		if v, err := strconv.Atoi(tier); err == nil && v >= 0 {
			spec.HighestTierAllowed = &v
		} else {
			problems = append(problems, Problem{"InvalidNetworkTopology",
				fmt.Sprintf("annotation %s=%q is not a non-negative integer; ignored", keys.NetworkTopologyHighestTier, tier)})
		}
	}
	return spec, problems
}

// Build is the group Volcano's controller would create for pod, given the
// merged annotations of the pod's owners (nil when owner annotations are not
// inherited). The order is Volcano's: owner annotations first, then the
// pod's own annotations and labels override them.
func Build(pod *corev1.Pod, upper map[string]string, inherit bool, now time.Time) (*v1beta1.PodGroup, []Problem) {
	minMember := int32(1)
	if inherit {
		minMember = MinMember(upper)
	}
	minRes := MinResources(pod, minMember, now)
	pg := &v1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       pod.Namespace,
			Name:            GroupName(pod),
			OwnerReferences: ownerReferences(pod),
			Annotations:     map[string]string{},
			Labels:          map[string]string{},
		},
		Spec: v1beta1.PodGroupSpec{
			MinMember:         minMember,
			PriorityClassName: pod.Spec.PriorityClassName,
			MinResources:      &minRes,
		},
		Status: v1beta1.PodGroupStatus{Phase: v1beta1.PodGroupPending},
	}
	if inherit {
		for k, v := range upper {
			if strings.HasPrefix(k, keys.VolcanoAnnotationPrefix) {
				pg.Annotations[k] = v
			}
		}
	}
	pg.Spec.Queue = queueAnnotation(pod, upper, inherit)
	for _, k := range []string{keys.Preemptable, keys.CooldownTime, keys.RevocableZone} {
		if v, ok := pod.Annotations[k]; ok {
			pg.Annotations[k] = v
		}
	}
	for _, k := range managedLabels {
		if v, ok := pod.Labels[k]; ok {
			pg.Labels[k] = v
		}
	}
	// The two disruption budget keys exclude each other; min-available wins.
	if v, ok := pod.Annotations[keys.JDBMinAvailable]; ok {
		pg.Annotations[keys.JDBMinAvailable] = v
		delete(pg.Annotations, keys.JDBMaxUnavailable)
	} else if v, ok := pod.Annotations[keys.JDBMaxUnavailable]; ok {
		pg.Annotations[keys.JDBMaxUnavailable] = v
	}
	nt, problems := NetworkTopology(pod)
	pg.Spec.NetworkTopology = nt
	return pg, problems
}

// queueAnnotation is the queue the annotations name: the owner's under
// either spelling, beaten by the pod's; empty when none does.
func queueAnnotation(pod *corev1.Pod, upper map[string]string, inherit bool) string {
	if q, ok := rules.QueueAnnotation(pod.Annotations); ok {
		return q
	}
	if inherit {
		q, _ := rules.QueueAnnotation(upper)
		return q
	}
	return ""
}

// QueueOf is the queue of the group Build makes for pod: the queue its
// annotations name, else the CRD default.
func QueueOf(pod *corev1.Pod, upper map[string]string, inherit bool) string {
	return rules.QueueOf(queueAnnotation(pod, upper, inherit))
}

// managedLabels are the pod labels a group takes over.
var managedLabels = []string{keys.Preemptable, keys.CooldownTime}

// Merge returns existing with the fields this controller manages set as in
// desired, and whether anything changed. Fields others may own (other
// labels and annotations, minTaskMember, subGroupPolicy, status) are kept,
// so an update never undoes someone else's work. The comparison is semantic
// (1000m equals 1) and reads an empty queue as the CRD default, so a group
// that is already right is never written again.
func Merge(existing, desired *v1beta1.PodGroup) (*v1beta1.PodGroup, bool) {
	out := existing.DeepCopy()
	out.Spec.MinMember = desired.Spec.MinMember
	out.Spec.MinResources = nil
	if desired.Spec.MinResources != nil {
		res := desired.Spec.MinResources.DeepCopy()
		out.Spec.MinResources = &res
	}
	out.Spec.PriorityClassName = desired.Spec.PriorityClassName
	out.Spec.NetworkTopology = desired.Spec.NetworkTopology.DeepCopy()
	out.Spec.Queue = desired.Spec.Queue
	if out.Spec.Queue == "" {
		out.Spec.Queue = keys.DefaultQueue
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for _, k := range managedLabels {
		if v, ok := desired.Labels[k]; ok {
			out.Labels[k] = v
		} else {
			delete(out.Labels, k)
		}
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	for k := range out.Annotations {
		if _, ok := desired.Annotations[k]; !ok && strings.HasPrefix(k, keys.VolcanoAnnotationPrefix) {
			delete(out.Annotations, k)
		}
	}
	for k, v := range desired.Annotations {
		out.Annotations[k] = v
	}
	changed := !equality.Semantic.DeepEqual(existing.Spec, out.Spec) ||
		!equality.Semantic.DeepEqual(existing.Labels, out.Labels) ||
		!equality.Semantic.DeepEqual(existing.Annotations, out.Annotations)
	return out, changed
}
