package podgroup

import (
	"context"
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func TestBarePod(t *testing.T) {
	ns := namespace(t)
	spec := podSpec("volcano", res("cpu", "500m", "memory", "256Mi"), nil)
	spec.PriorityClassName = priorityClass
	pod := createPod(t, ns, "solo", spec)

	pg := groupOf(t, pod, "podgroup-"+string(pod.UID))
	if len(pg.OwnerReferences) != 1 {
		t.Fatalf("owner references: %+v", pg.OwnerReferences)
	}
	ref := pg.OwnerReferences[0]
	if ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name != "solo" || ref.UID != pod.UID ||
		!ptr.Deref(ref.Controller, false) || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("owner reference: %+v", ref)
	}
	if pg.Spec.MinMember != 1 || pg.Spec.Queue != keys.DefaultQueue || pg.Spec.PriorityClassName != priorityClass ||
		pg.Spec.NetworkTopology != nil || pg.Status.Phase != v1beta1.PodGroupPending {
		t.Errorf("spec %+v status %+v", pg.Spec, pg.Status)
	}
	equalResources(t, pg.Spec.MinResources, res(
		"count/pods", "1", "pods", "1", "cpu", "500m", "requests.cpu", "500m", "memory", "256Mi", "requests.memory", "256Mi"))
}

func TestSecondSchedulerName(t *testing.T) {
	ns := namespace(t)
	pod := createPod(t, ns, "two", podSpec("volcano-two", nil, nil))
	groupOf(t, pod, "podgroup-"+string(pod.UID))
}

func TestReplicaSetMinMemberAndInheritedAnnotations(t *testing.T) {
	ns := namespace(t)
	rs := createReplicaSet(t, ns, "train", 3, map[string]string{
		keys.GroupMinMember:   "3",
		keys.VolcanoQueueName: "gpu-queue",
		keys.Preemptable:      "true",
		keys.CooldownTime:     "600s",
		"example.com/note":    "not a volcano key",
	}, podSpec("volcano", res("cpu", "1", "memory", "1Gi"), nil))
	// The pods override one inherited setting and add one of their own.
	rs.Spec.Template.Annotations = map[string]string{keys.CooldownTime: "60s", keys.JDBMaxUnavailable: "1"}
	pods := replicasOf(t, rs, 3)

	want := "podgroup-" + string(rs.UID)
	var pg *v1beta1.PodGroup
	for _, p := range pods {
		pg = groupOf(t, p, want)
	}
	if len(pg.OwnerReferences) != 1 || pg.OwnerReferences[0].UID != rs.UID || pg.OwnerReferences[0].Kind != "ReplicaSet" ||
		!ptr.Deref(pg.OwnerReferences[0].Controller, false) {
		t.Errorf("owner references must be the pod's: %+v", pg.OwnerReferences)
	}
	if pg.Spec.MinMember != 3 || pg.Spec.Queue != "gpu-queue" {
		t.Errorf("spec: %+v", pg.Spec)
	}
	equalResources(t, pg.Spec.MinResources, res(
		"count/pods", "3", "pods", "3", "cpu", "3", "requests.cpu", "3", "memory", "3Gi", "requests.memory", "3Gi"))
	wantAnn := map[string]string{
		keys.VolcanoQueueName: "gpu-queue", keys.Preemptable: "true", keys.CooldownTime: "60s", keys.JDBMaxUnavailable: "1",
	}
	for k, v := range wantAnn {
		if pg.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, pg.Annotations[k], v)
		}
	}
	if _, ok := pg.Annotations["example.com/note"]; ok {
		t.Error("only volcano.sh/ annotations are inherited")
	}
}

func TestInvalidMinMember(t *testing.T) {
	ns := namespace(t)
	for _, v := range []string{"-2", "many"} {
		rs := createReplicaSet(t, ns, "rs-"+map[string]string{"-2": "negative", "many": "word"}[v], 2,
			map[string]string{keys.GroupMinMember: v}, podSpec("volcano", res("cpu", "100m"), nil))
		pod := replicasOf(t, rs, 1)[0]
		pg := groupOf(t, pod, "podgroup-"+string(rs.UID))
		if pg.Spec.MinMember != 1 {
			t.Errorf("min-member %q: minMember %d, want 1", v, pg.Spec.MinMember)
		}
		equalResources(t, pg.Spec.MinResources, res("count/pods", "1", "pods", "1", "cpu", "100m", "requests.cpu", "100m"))
	}
}

func TestGPURequestsWithLimits(t *testing.T) {
	ns := namespace(t)
	rs := createReplicaSet(t, ns, "gpu", 2, map[string]string{keys.GroupMinMember: "2"}, podSpec("volcano",
		res("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "1"),
		res("cpu", "2", "memory", "2Gi", "nvidia.com/gpu", "1")))
	pod := replicasOf(t, rs, 1)[0]
	pg := groupOf(t, pod, "podgroup-"+string(rs.UID))
	equalResources(t, pg.Spec.MinResources, res(
		"count/pods", "2", "pods", "2",
		"cpu", "2", "requests.cpu", "2", "limits.cpu", "4",
		"memory", "2Gi", "requests.memory", "2Gi", "limits.memory", "4Gi",
		"nvidia.com/gpu", "2", "requests.nvidia.com/gpu", "2",
	))
}

func TestNetworkTopology(t *testing.T) {
	ns := namespace(t)
	hard := createPod(t, ns, "hard", podSpec("volcano", nil, nil), withAnnotations(keys.NetworkTopologyHighestTier, "2"))
	soft := createPod(t, ns, "soft", podSpec("volcano", nil, nil), withAnnotations(keys.NetworkTopologyMode, "soft"))
	bad := createPod(t, ns, "bad", podSpec("volcano", nil, nil),
		withAnnotations(keys.NetworkTopologyMode, "strict", keys.NetworkTopologyHighestTier, "1"))

	if nt := groupOf(t, hard, "podgroup-"+string(hard.UID)).Spec.NetworkTopology; nt == nil ||
		nt.Mode != v1beta1.HardNetworkTopologyMode || ptr.Deref(nt.HighestTierAllowed, -1) != 2 {
		t.Errorf("hard (default mode): %+v", nt)
	}
	if nt := groupOf(t, soft, "podgroup-"+string(soft.UID)).Spec.NetworkTopology; nt == nil ||
		nt.Mode != v1beta1.SoftNetworkTopologyMode || nt.HighestTierAllowed != nil {
		t.Errorf("soft: %+v", nt)
	}
	if nt := groupOf(t, bad, "podgroup-"+string(bad.UID)).Spec.NetworkTopology; nt == nil ||
		nt.Mode != v1beta1.HardNetworkTopologyMode || ptr.Deref(nt.HighestTierAllowed, -1) != 1 {
		t.Errorf("invalid mode must keep hard: %+v", nt)
	}
	warningFor(t, ns, "bad", "InvalidNetworkTopology")
}

func TestPodWithExistingGroupNameIsLeftAlone(t *testing.T) {
	ns := namespace(t)
	pod := createPod(t, ns, "member", podSpec("volcano", nil, nil), withAnnotations(keys.KubeGroupName, "job-group"))
	settled(t, ns)
	notFound(t, ns, "podgroup-"+string(pod.UID))
	got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), "member", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Annotations[keys.KubeGroupName]; g != "job-group" {
		t.Errorf("group-name overwritten: %q", g)
	}
}

func TestPodForAnotherSchedulerIsIgnored(t *testing.T) {
	ns := namespace(t)
	pod := createPod(t, ns, "other", podSpec("default-scheduler", nil, nil))
	settled(t, ns)
	notFound(t, ns, "podgroup-"+string(pod.UID))
	got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), "other", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Annotations[keys.KubeGroupName]; ok {
		t.Errorf("pod of another scheduler annotated: %v", got.Annotations)
	}
}

// A failure that retrying cannot fix (the queue name breaks the PodGroup
// schema) is retried --max-requeue-num times, then dropped with a Warning.
func TestUnfixableRequestIsDroppedWithWarning(t *testing.T) {
	ns := namespace(t)
	createPod(t, ns, "badqueue", podSpec("volcano", nil, nil), withAnnotations(keys.QueueName, "Not_A_Queue"))
	ev := warningFor(t, ns, "badqueue", "PodGroupSyncFailed")
	t.Logf("event: %s", ev.Message)
	got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), "badqueue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Annotations[keys.KubeGroupName]; ok {
		t.Error("a pod whose group could not be created must not be annotated")
	}
}

func createStatefulSet(t *testing.T, ns, name string, replicas int32, spec corev1.PodSpec) *appsv1.StatefulSet {
	t.Helper()
	labels := map[string]string{"app": name}
	sts, err := env.kube.AppsV1().StatefulSets(ns).Create(context.Background(), &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{keys.GroupMinMember: "2"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sts
}

// During a rolling update the group follows the pods of the update
// revision, not the older replicas that are still around.
func TestStatefulSetFollowsUpdateRevision(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	sts := createStatefulSet(t, ns, "web", 2, podSpec("volcano", res("cpu", "100m"), nil))
	sts.Status.UpdateRevision = "web-new"
	sts.Status.CurrentRevision = "web-old"
	sts.Status.Replicas = 2
	sts, err := env.kube.AppsV1().StatefulSets(ns).UpdateStatus(ctx, sts, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podOf := func(name, rev, cpu string) *corev1.Pod {
		return createPod(t, ns, name, podSpec("volcano", res("cpu", cpu), nil), ownedBy("StatefulSet", sts),
			withLabels(map[string]string{"app": "web", appsv1.ControllerRevisionHashLabelKey: rev}))
	}
	// web-0 sorts first: were the revision ignored, it would be the template.
	old := podOf("web-0", "web-old", "100m")
	cur := podOf("web-1", "web-new", "300m")
	want := "podgroup-" + string(sts.UID)
	groupOf(t, old, want)
	groupOf(t, cur, want)

	// Any change of the StatefulSet re-syncs its group; the new inherited
	// annotation shows that sync happened.
	patch := []byte(`{"metadata":{"annotations":{"volcano.sh/revocable-zone":"rz1"}}}`)
	if _, err := env.kube.AppsV1().StatefulSets(ns).Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var pg *v1beta1.PodGroup
	eventually(t, "group re-synced from the StatefulSet", func(ctx context.Context) (bool, error) {
		pg, err = env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, want, metav1.GetOptions{})
		return err == nil && pg.Annotations[keys.RevocableZone] == "rz1", err
	})
	if pg.Spec.MinMember != 2 {
		t.Errorf("minMember %d", pg.Spec.MinMember)
	}
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "600m", "requests.cpu", "600m"))
}

func TestReplicasToZeroDeletesGroup(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	rs := createReplicaSet(t, ns, "shrink", 2, nil, podSpec("volcano", nil, nil))
	pods := replicasOf(t, rs, 2)
	want := "podgroup-" + string(rs.UID)
	groupOf(t, pods[0], want)

	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": 0}})
	if _, err := env.kube.AppsV1().ReplicaSets(ns).Patch(ctx, "shrink", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "group deleted at replicas 0", func(ctx context.Context) (bool, error) {
		_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, want, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

func TestOwnerAnnotationChangeUpdatesGroup(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	rs := createReplicaSet(t, ns, "grow", 2, map[string]string{keys.VolcanoQueueName: "q1"}, podSpec("volcano", res("cpu", "1"), nil))
	pods := replicasOf(t, rs, 2)
	want := "podgroup-" + string(rs.UID)
	pg := groupOf(t, pods[0], want)
	groupOf(t, pods[1], want)
	if pg.Spec.Queue != "q1" || pg.Spec.MinMember != 1 {
		t.Fatalf("before: %+v", pg.Spec)
	}
	// What others wrote on the group must survive our update: a label, the
	// scheduler's condition and status counts, a user's minTaskMember. The
	// controller's cache holds none of these (framework.CacheRead), so a
	// full Update from it would erase them.
	if _, err := env.vc.SchedulingV1beta1().PodGroups(ns).Patch(ctx, want, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"ml"}},"spec":{"minTaskMember":{"worker":1}},`+
			`"status":{"phase":"Inqueue","running":1,"conditions":[{"type":"Unschedulable","status":"True",`+
			`"reason":"NotEnoughResources","message":"1/2 tasks in gang unschedulable","transitionID":"t-1"}]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	patch := []byte(`{"metadata":{"annotations":{"volcano.sh/queue-name":"q2","scheduling.volcano.sh/group-min-member":"2"}}}`)
	if _, err := env.kube.AppsV1().ReplicaSets(ns).Patch(ctx, "grow", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var err error
	eventually(t, "group updated from the owner's annotations", func(ctx context.Context) (bool, error) {
		pg, err = env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, want, metav1.GetOptions{})
		return err == nil && pg.Spec.Queue == "q2", err
	})
	if pg.Spec.MinMember != 2 || pg.Annotations[keys.VolcanoQueueName] != "q2" || pg.Labels["team"] != "ml" {
		t.Errorf("after: spec %+v meta %+v", pg.Spec, pg.ObjectMeta)
	}
	if pg.Spec.MinTaskMember["worker"] != 1 || pg.Status.Phase != v1beta1.PodGroupInqueue || pg.Status.Running != 1 ||
		len(pg.Status.Conditions) != 1 || pg.Status.Conditions[0].TransitionID != "t-1" {
		t.Errorf("others' fields lost by the update: minTaskMember %v status %+v", pg.Spec.MinTaskMember, pg.Status)
	}
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "2", "requests.cpu", "2"))
}

// A LeaderWorkerSet-style pod that already names its own group is left out
// of the workload's group and keeps its annotation.
func TestWorkloadLeavesPodsOfOtherGroupsAlone(t *testing.T) {
	ns := namespace(t)
	rs := createReplicaSet(t, ns, "lws", 2, nil, podSpec("volcano", nil, nil))
	theirs := createPod(t, ns, "lws-a", rs.Spec.Template.Spec, withLabels(rs.Spec.Template.Labels), ownedBy("ReplicaSet", rs),
		withAnnotations(keys.KubeGroupName, "lws-own-group"))
	ours := createPod(t, ns, "lws-b", rs.Spec.Template.Spec, withLabels(rs.Spec.Template.Labels), ownedBy("ReplicaSet", rs))
	groupOf(t, ours, "podgroup-"+string(rs.UID))
	// Re-sync the ReplicaSet with both pods in the cache.
	if _, err := env.kube.AppsV1().ReplicaSets(ns).Patch(context.Background(), "lws", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"volcano.sh/preemptable":"true"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "group re-synced", func(ctx context.Context) (bool, error) {
		pg, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, "podgroup-"+string(rs.UID), metav1.GetOptions{})
		return err == nil && pg.Annotations[keys.Preemptable] == "true", err
	})
	got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), theirs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Annotations[keys.KubeGroupName]; g != "lws-own-group" {
		t.Errorf("pod of another group moved to %q", g)
	}
}
