package podgroup

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// TestTrimmedPodBuildsTheSameGroup: the cache keeps of a pod only what
// CacheReads declares, so the group built from a cached pod must equal the
// group built from the full pod, for every way a pod can hold resources:
// plain and init containers, restartable sidecars, pod-level resources,
// overhead, in-place resize (status resources), terminal phases, extended
// resources and hugepages. A field the quota arithmetic reads but the trim
// dropped shows up here as a different minResources.
func TestTrimmedPodBuildsTheSameGroup(t *testing.T) {
	// Of the annotations, only those of the controller's schedulers'
	// pods are kept (the default: volcano).
	trim := framework.CacheTransform(New())
	always := corev1.ContainerRestartPolicyAlways
	base := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1",
				Annotations: map[string]string{keys.QueueName: "q1", keys.NetworkTopologyMode: "soft", keys.Preemptable: "true",
					keys.JDBMinAvailable: "2", keys.KubeGroupName: "", "example.com/blob": "never read"},
				Labels:        map[string]string{keys.CooldownTime: "30m"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}},
			Spec: corev1.PodSpec{
				SchedulerName: "volcano", PriorityClassName: "high",
				Containers: []corev1.Container{{Name: "main", Image: "img",
					Env:       []corev1.EnvVar{{Name: "A", Value: "B"}},
					Resources: corev1.ResourceRequirements{Requests: res("cpu", "2", "memory", "4Gi"), Limits: res("cpu", "4", "memory", "4Gi")}}},
			},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
		mut(p)
		return p
	}
	pods := map[string]*corev1.Pod{
		"plain": base(func(*corev1.Pod) {}),
		"init and sidecar": base(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{
				{Name: "setup", Resources: corev1.ResourceRequirements{Requests: res("cpu", "8")}},
				{Name: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: res("cpu", "500m", "memory", "1Gi")}},
			}
		}),
		"pod-level resources and overhead": base(func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: res("cpu", "6", "memory", "8Gi"), Limits: res("cpu", "8")}
			p.Spec.Overhead = res("cpu", "250m", "memory", "120Mi")
		}),
		"resized while running": base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "img", Ready: true,
				AllocatedResources: res("cpu", "3", "memory", "4Gi"),
				Resources:          &corev1.ResourceRequirements{Requests: res("cpu", "3", "memory", "4Gi"), Limits: res("cpu", "3")}}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred}}
		}),
		"running, never resized": base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "img", Ready: true,
				AllocatedResources: res("cpu", "2", "memory", "4Gi"),
				Resources:          &corev1.ResourceRequirements{Requests: res("cpu", "2000m", "memory", "4Gi"), Limits: res("cpu", "4", "memory", "4Gi")}}}
		}),
		"shrinking in progress": base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
				AllocatedResources: res("cpu", "3", "memory", "4Gi"),
				Resources:          &corev1.ResourceRequirements{Requests: res("cpu", "3", "memory", "4Gi"), Limits: res("cpu", "6", "memory", "4Gi")}}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}}
		}),
		"resize infeasible, status equals spec": base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
				AllocatedResources: res("cpu", "2", "memory", "4Gi"),
				Resources:          &corev1.ResourceRequirements{Requests: res("cpu", "2", "memory", "4Gi"), Limits: res("cpu", "4", "memory", "4Gi")}}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}
		}),
		"resize infeasible": base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main",
				AllocatedResources: res("cpu", "1", "memory", "4Gi"),
				Resources:          &corev1.ResourceRequirements{Requests: res("cpu", "1", "memory", "4Gi"), Limits: res("cpu", "1")}}}
			p.Status.Conditions = []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}
		}),
		"succeeded": base(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		"deleted past its grace period": base(func(p *corev1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: now.Add(-10 * time.Minute)}
			p.DeletionGracePeriodSeconds = ptr.To[int64](30)
		}),
		"gpu and hugepages": base(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = res("cpu", "1", "nvidia.com/gpu", "2", "hugepages-2Mi", "1Gi", "ephemeral-storage", "10Gi")
			p.Spec.Containers[0].Resources.Limits = res("nvidia.com/gpu", "2", "hugepages-2Mi", "1Gi")
		}),
	}
	owners := map[string]string{keys.GroupMinMember: "3", keys.VolcanoQueueName: "from-owner"}
	for name, pod := range pods {
		t.Run(name, func(t *testing.T) {
			cached, err := trim(pod.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			slim := cached.(*corev1.Pod)
			if len(slim.Spec.Containers[0].Env) != 0 || slim.Spec.Containers[0].Image != "" || slim.ManagedFields != nil {
				t.Fatalf("the cached pod was not trimmed: %+v", slim.Spec.Containers[0])
			}
			if _, kept := slim.Annotations["example.com/blob"]; kept {
				t.Errorf("an annotation the controller never reads was cached: %v", slim.Annotations)
			}
			if name == "running, never resized" && slim.Status.ContainerStatuses != nil {
				t.Errorf("status resources equal to the spec were kept: %+v", slim.Status.ContainerStatuses)
			}
			want, wantProblems := Build(pod, owners, true, now)
			got, gotProblems := Build(slim, owners, true, now)
			if !equality.Semantic.DeepEqual(got, want) || !equality.Semantic.DeepEqual(gotProblems, wantProblems) {
				t.Errorf("group from the cached pod differs:\n got %+v\nwant %+v", got, want)
			}
			if !equality.Semantic.DeepEqual(QuotaUsage(slim, now), QuotaUsage(pod, now)) {
				t.Errorf("quota usage differs: %v vs %v", QuotaUsage(slim, now), QuotaUsage(pod, now))
			}
		})
	}
}
