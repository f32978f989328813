package podgroup

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// CacheReads implements framework.Controller. Of a pod the controller reads
// its scheduler, priority class, what the quota arithmetic of
// component-helpers reads (KeepPodResources) and, of the pods it groups,
// the annotations podAnnotations names; of a workload its selector,
// replicas, template scheduler and (StatefulSet) update revision; of a
// DaemonSet or Job its selector and template scheduler (annotations are
// metadata); of a queue its state; of a group only that it exists (read
// from the shared podgroup rows, not this informer, against an API server).
// Groups are written with merge patches, never a full Update.
func (c *Controller) CacheReads() []framework.CacheRead {
	reads := []framework.CacheRead{
		framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *corev1.Pod) {
			dst.Spec.SchedulerName = src.Spec.SchedulerName
			dst.Spec.PriorityClassName = src.Spec.PriorityClassName
			KeepPodResources(dst, src)
		}), func(src *corev1.Pod, key string) bool {
			// Only pods of its schedulers are grouped (wants); of the
			// others the controller reads no annotation.
			return c.wants(&src.Spec) && (podAnnotations[key] || rules.IsQueueAnnotation(key))
		}),
		// Of a group, whether it exists: its name (podgrouprows.Names).
		// The groups it brings up to date are read from the API server.
		framework.ReadsOnly(func(_, _ *v1beta1.PodGroup) {}),
		framework.ReadsOnly(func(dst, src *v1beta1.Queue) {
			dst.Status.State = src.Status.State
		}),
	}
	// The owners' reads are declared next to what the controller reads of
	// them, in the owner table, so that the two cannot drift apart.
	for _, o := range ownerKinds {
		reads = append(reads, o.reads)
	}
	return reads
}

// podAnnotations are the annotations of a pod the controller reads, with
// the queue's (rules.IsQueueAnnotation): its group and the Volcano
// settings Build copies to the group or reads (network topology). The
// owners' annotations are read apart (ownerAnnotation).
var podAnnotations = map[string]bool{
	keys.KubeGroupName: true,
	keys.Preemptable:   true, keys.CooldownTime: true, keys.RevocableZone: true,
	keys.JDBMinAvailable: true, keys.JDBMaxUnavailable: true,
	keys.NetworkTopologyMode: true, keys.NetworkTopologyHighestTier: true,
}

// ownerAnnotation tells whether the controller reads an annotation of a
// pod's owner: the Volcano ones its pods inherit (Build), the queue under
// either spelling and the group's minimum member count.
func ownerAnnotation(key string) bool {
	return strings.HasPrefix(key, keys.VolcanoAnnotationPrefix) || rules.IsQueueAnnotation(key) || key == keys.GroupMinMember
}

// KeepPodResources copies into dst every field of a pod that
// component-helpers' PodRequests and PodLimits read (with status resources
// on, for in-place resize): containers' names, resources and restart
// policies (sidecars), pod-level resources, overhead, phase, the
// PodResizePending condition, the pod-level resources in status and the
// containers' status resources. Env, volumes, probes, images and the rest
// stay out.
//
// A container's status resources are kept only when they can change the
// result: when they differ from its spec (a resize not yet done) or when a
// resize is pending (then a missing status means "none", not "the spec").
// A running pod that was never resized reports exactly its spec, and those
// three resource lists would otherwise be a third of the cached pod.
func KeepPodResources(dst, src *corev1.Pod) {
	containers := func(cs []corev1.Container) []corev1.Container {
		if cs == nil {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
		}
		return out
	}
	resizePending := slices.ContainsFunc(src.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodResizePending })
	statuses := func(ss []corev1.ContainerStatus, specs []corev1.Container) []corev1.ContainerStatus {
		var out []corev1.ContainerStatus
		for _, s := range ss {
			if s.Resources == nil && s.AllocatedResources == nil {
				continue
			}
			i := slices.IndexFunc(specs, func(c corev1.Container) bool { return c.Name == s.Name })
			if !resizePending && i >= 0 && reportsSpec(s, specs[i].Resources) {
				continue
			}
			out = append(out, corev1.ContainerStatus{Name: s.Name, Resources: s.Resources, AllocatedResources: s.AllocatedResources})
		}
		return out
	}
	dst.Spec.Containers = containers(src.Spec.Containers)
	dst.Spec.InitContainers = containers(src.Spec.InitContainers)
	dst.Spec.Resources = src.Spec.Resources
	dst.Spec.Overhead = src.Spec.Overhead
	dst.Status.Phase = src.Status.Phase
	framework.KeepPodConditions(dst, src, corev1.PodResizePending)
	dst.Status.Resources = src.Status.Resources
	dst.Status.AllocatedResources = src.Status.AllocatedResources
	dst.Status.NodeAllocatableResourceClaimStatuses = src.Status.NodeAllocatableResourceClaimStatuses
	dst.Status.ContainerStatuses = statuses(src.Status.ContainerStatuses, src.Spec.Containers)
	dst.Status.InitContainerStatuses = statuses(src.Status.InitContainerStatuses, src.Spec.InitContainers)
}

// reportsSpec says whether a container status holds nothing but its spec's
// resources: status requests and limits (when set) equal the spec's, and
// the allocated resources (when set) equal the spec's requests.
func reportsSpec(s corev1.ContainerStatus, spec corev1.ResourceRequirements) bool {
	if s.Resources != nil {
		if s.Resources.Requests != nil && !equality.Semantic.DeepEqual(s.Resources.Requests, spec.Requests) {
			return false
		}
		if s.Resources.Limits != nil && !equality.Semantic.DeepEqual(s.Resources.Limits, spec.Limits) {
			return false
		}
	}
	return s.AllocatedResources == nil || equality.Semantic.DeepEqual(s.AllocatedResources, spec.Requests)
}
