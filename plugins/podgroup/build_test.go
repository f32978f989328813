package podgroup

import (
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

var now = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func res(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// equalLists compares quantities by value and reports every difference.
func equalLists(t *testing.T, got, want corev1.ResourceList) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.Cmp(w) != 0 {
			t.Errorf("%s: got %v (present %v), want %s", k, g.String(), ok, w.String())
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected key %s=%s", k, g.String())
		}
	}
}

func TestGroupNameAndOwners(t *testing.T) {
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pod-uid"}}
	if got := GroupName(bare); got != "podgroup-pod-uid" {
		t.Errorf("bare pod: %s", got)
	}
	refs := ownerReferences(bare)
	if len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].APIVersion != "v1" || refs[0].UID != "pod-uid" ||
		!ptr.Deref(refs[0].Controller, false) || !ptr.Deref(refs[0].BlockOwnerDeletion, false) {
		t.Errorf("bare pod owner refs: %+v", refs)
	}
	owned := bare.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "cm-uid"},
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)},
	}
	if got := GroupName(owned); got != "podgroup-rs-uid" {
		t.Errorf("owned pod: %s", got)
	}
	if refs := ownerReferences(owned); len(refs) != 2 || refs[1].UID != "rs-uid" {
		t.Errorf("owned pod must share all of its owner references: %+v", refs)
	}
	// Owner references that are not controllers do not name the group.
	weak := bare.DeepCopy()
	weak.OwnerReferences = owned.OwnerReferences[:1]
	if got := GroupName(weak); got != "podgroup-pod-uid" {
		t.Errorf("non-controller owner: %s", got)
	}
	if refs := ownerReferences(weak); len(refs) != 1 || refs[0].Kind != "Pod" {
		t.Errorf("non-controller owner refs: %+v", refs)
	}
}

func TestQuotaUsageKeys(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{
			Name: "init", Resources: corev1.ResourceRequirements{Requests: res("cpu", "3")},
		}},
		Containers: []corev1.Container{{
			Name: "main",
			Resources: corev1.ResourceRequirements{
				Requests: res("cpu", "500m", "memory", "1Gi", "nvidia.com/gpu", "2", "hugepages-2Mi", "4Mi"),
				Limits:   res("cpu", "1", "memory", "2Gi", "nvidia.com/gpu", "2", "hugepages-2Mi", "4Mi"),
			},
		}, {
			Name:      "side",
			Resources: corev1.ResourceRequirements{Requests: res("cpu", "250m")},
		}},
		Overhead: res("memory", "128Mi"),
	}}
	got := QuotaUsage(pod, now)
	// cpu: max(init 3, 500m+250m) = 3; memory: 1Gi + 128Mi overhead.
	// Limits of extended resources are not part of quota usage.
	want := res(
		"count/pods", "1", "pods", "1",
		"cpu", "3", "requests.cpu", "3", "limits.cpu", "1",
		"memory", "1152Mi", "requests.memory", "1152Mi", "limits.memory", "2176Mi",
		"hugepages-2Mi", "4Mi", "requests.hugepages-2Mi", "4Mi",
		"nvidia.com/gpu", "2", "requests.nvidia.com/gpu", "2",
	)
	equalLists(t, got, want)
}

func TestQuotaUsageNoLimitsNoRequests(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	equalLists(t, QuotaUsage(pod, now), res("count/pods", "1", "pods", "1"))

	pod.Spec.Containers[0].Resources.Requests = res("cpu", "1", "example.com/foo", "0")
	// A zero extended request is charged as requests.* only (Volcano adds the
	// bare name for non-zero values).
	equalLists(t, QuotaUsage(pod, now), res("count/pods", "1", "pods", "1", "cpu", "1", "requests.cpu", "1", "requests.example.com/foo", "0"))

	done := pod.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	equalLists(t, QuotaUsage(done, now), res("count/pods", "1"))

	gone := pod.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{Time: now.Add(-time.Minute)}
	gone.DeletionGracePeriodSeconds = ptr.To[int64](30)
	equalLists(t, QuotaUsage(gone, now), res("count/pods", "1"))
	gone.DeletionGracePeriodSeconds = ptr.To[int64](300)
	if _, ok := QuotaUsage(gone, now)["cpu"]; !ok {
		t.Error("a pod still in its grace period is charged")
	}
}

func TestMinMember(t *testing.T) {
	for in, want := range map[string]int32{"3": 3, "0": 0, "-2": 1, "abc": 1, "1.5": 1, "99999999999": 1} {
		if got := MinMember(map[string]string{keys.GroupMinMember: in}); got != want {
			t.Errorf("%q: got %d want %d", in, got, want)
		}
	}
	if got := MinMember(nil); got != 1 {
		t.Errorf("missing: %d", got)
	}
}

func TestMinResourcesMultiplies(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: res("cpu", "500m", "memory", "1Gi")},
	}}}}
	got := MinResources(pod, 3, now)
	equalLists(t, got, res("count/pods", "3", "pods", "3", "cpu", "1500m", "requests.cpu", "1500m", "memory", "3Gi", "requests.memory", "3Gi"))
	if s := ptr.To(got["memory"]).String(); s != "3Gi" {
		t.Errorf("memory prints as %s", s)
	}
	if got := MinResources(pod, 0, now); len(got) != 0 || got == nil {
		t.Errorf("minMember 0: %v", got)
	}
}

func TestNetworkTopology(t *testing.T) {
	pod := func(a map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	if nt, p := NetworkTopology(pod(nil)); nt != nil || p != nil {
		t.Errorf("no annotations: %v %v", nt, p)
	}
	nt, p := NetworkTopology(pod(map[string]string{keys.NetworkTopologyHighestTier: "2"}))
	if nt.Mode != v1beta1.HardNetworkTopologyMode || ptr.Deref(nt.HighestTierAllowed, -1) != 2 || p != nil {
		t.Errorf("tier only: %+v %v", nt, p)
	}
	nt, p = NetworkTopology(pod(map[string]string{keys.NetworkTopologyMode: "soft"}))
	if nt.Mode != v1beta1.SoftNetworkTopologyMode || nt.HighestTierAllowed != nil || p != nil {
		t.Errorf("soft: %+v %v", nt, p)
	}
	// Volcano reads the mode without regard to case.
	for mode, want := range map[string]v1beta1.NetworkTopologyMode{
		"Soft": v1beta1.SoftNetworkTopologyMode, "SOFT": v1beta1.SoftNetworkTopologyMode, "Hard": v1beta1.HardNetworkTopologyMode,
	} {
		nt, p = NetworkTopology(pod(map[string]string{keys.NetworkTopologyMode: mode}))
		if nt.Mode != want || p != nil {
			t.Errorf("%s: %+v %v, want mode %s and no problem", mode, nt, p, want)
		}
	}
	nt, p = NetworkTopology(pod(map[string]string{keys.NetworkTopologyMode: "strict", keys.NetworkTopologyHighestTier: "x"}))
	if nt.Mode != v1beta1.HardNetworkTopologyMode || nt.HighestTierAllowed != nil || len(p) != 2 {
		t.Errorf("invalid: %+v %v", nt, p)
	}
}

func TestBuildPrecedence(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "p", UID: "u",
			Annotations: map[string]string{
				keys.QueueName:         "pod-queue",
				keys.Preemptable:       "false",
				keys.JDBMinAvailable:   "2",
				keys.JDBMaxUnavailable: "1",
			},
			Labels: map[string]string{keys.CooldownTime: "60s", "app": "x"},
		},
		Spec: corev1.PodSpec{PriorityClassName: "high", Containers: []corev1.Container{{Name: "c"}}},
	}
	upper := map[string]string{
		keys.GroupMinMember:    "2",
		keys.VolcanoQueueName:  "owner-queue",
		keys.Preemptable:       "true",
		keys.RevocableZone:     "rz1",
		keys.JDBMaxUnavailable: "3",
		"example.com/other":    "not inherited",
	}
	pg, problems := Build(pod, upper, true, now)
	if problems != nil {
		t.Fatal(problems)
	}
	if pg.Spec.MinMember != 2 || pg.Spec.Queue != "pod-queue" || pg.Spec.PriorityClassName != "high" || pg.Status.Phase != v1beta1.PodGroupPending {
		t.Errorf("spec: %+v status %+v", pg.Spec, pg.Status)
	}
	wantAnn := map[string]string{
		keys.Preemptable: "false", keys.RevocableZone: "rz1", keys.VolcanoQueueName: "owner-queue", keys.JDBMinAvailable: "2",
	}
	if len(pg.Annotations) != len(wantAnn) {
		t.Errorf("annotations: %v", pg.Annotations)
	}
	for k, v := range wantAnn {
		if pg.Annotations[k] != v {
			t.Errorf("annotation %s: got %q want %q", k, pg.Annotations[k], v)
		}
	}
	if len(pg.Labels) != 1 || pg.Labels[keys.CooldownTime] != "60s" {
		t.Errorf("labels: %v", pg.Labels)
	}

	// Without inheritance the owners count for nothing.
	pg, _ = Build(pod, upper, false, now)
	if pg.Spec.MinMember != 1 || pg.Annotations[keys.RevocableZone] != "" {
		t.Errorf("no inheritance: %+v %v", pg.Spec, pg.Annotations)
	}
}

func TestMergeDetectsOnlyRealChanges(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: res("cpu", "1")}}}}}
	desired, _ := Build(pod, nil, true, now)
	// What the API server hands back: defaulted queue, re-parsed quantities,
	// other people's labels and annotations, a status.
	existing := desired.DeepCopy()
	existing.Spec.Queue = "default"
	mr := corev1.ResourceList{}
	for k, v := range *existing.Spec.MinResources {
		mr[k] = resource.MustParse(v.String())
	}
	mr["cpu"] = resource.MustParse("1000m")
	existing.Spec.MinResources = &mr
	existing.Labels = map[string]string{"team": "a"}
	existing.Annotations = map[string]string{"note": "kept"}
	existing.Status.Phase = v1beta1.PodGroupRunning
	if _, changed := Merge(existing, desired); changed {
		t.Fatal("an up-to-date group must not be written")
	}

	existing.Annotations[keys.Preemptable] = "true" // inherited once, since removed
	pod.Annotations = map[string]string{keys.RevocableZone: "z"}
	desired, _ = Build(pod, nil, true, now)
	merged, changed := Merge(existing, desired)
	if !changed || merged.Annotations[keys.Preemptable] != "" || merged.Annotations[keys.RevocableZone] != "z" ||
		merged.Annotations["note"] != "kept" || merged.Labels["team"] != "a" || merged.Status.Phase != v1beta1.PodGroupRunning {
		t.Errorf("merge: changed=%v %+v", changed, merged.ObjectMeta)
	}
}

// TestMinResourcesMultipliesLargeMinMember: a min-member near MaxInt32 (a
// user's annotation) is multiplied, not added in a loop, and exact.
func TestMinResourcesMultipliesLargeMinMember(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("250m"),
		}},
	}}}}
	got := MinResources(pod, math.MaxInt32, time.Now())
	want := resource.MustParse("536870911750m") // 0.25 * 2147483647
	if q := got[corev1.ResourceCPU]; q.Cmp(want) != 0 {
		t.Errorf("cpu = %s, want %s", q.String(), want.String())
	}
	if len(MinResources(pod, 0, time.Now())) != 0 {
		t.Error("minMember 0 must give no resources")
	}
}
