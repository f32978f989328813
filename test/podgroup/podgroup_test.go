package podgroup

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// A pod created by hand gets a group of its own, which it owns: deleting
// the pod lets the garbage collector delete the group.
func TestBarePod(t *testing.T) {
	ns := namespace(t)
	spec := podSpec("volcano", res("cpu", "500m", "memory", "256Mi"), nil)
	spec.PriorityClassName = priorityClass
	pod := createPod(t, ns, "solo", spec)

	pg := groupOf(t, pod, groupName(pod.UID))
	ownedByController(t, pg, "v1", "Pod", "solo", pod.UID)
	if pg.Spec.MinMember != 1 || pg.Spec.Queue != keys.DefaultQueue || pg.Spec.PriorityClassName != priorityClass ||
		pg.Spec.NetworkTopology != nil || pg.Status.Phase != v1beta1.PodGroupPending {
		t.Errorf("spec %+v status %+v", pg.Spec, pg.Status)
	}
	equalResources(t, pg.Spec.MinResources, res(
		"count/pods", "1", "pods", "1", "cpu", "500m", "requests.cpu", "500m", "memory", "256Mi", "requests.memory", "256Mi"))

	if err := env.kube.CoreV1().Pods(ns).Delete(context.Background(), "solo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	groupGone(t, ns, pg.Name, "the garbage collector, after its owner pod was deleted")
}

func TestSecondSchedulerName(t *testing.T) {
	ns := namespace(t)
	pod := createPod(t, ns, "two", podSpec("volcano-two", nil, nil))
	groupOf(t, pod, groupName(pod.UID))
}

// The replicas of a Deployment, made by the real Deployment and ReplicaSet
// controllers, share ONE group named after their ReplicaSet. Its size comes
// from the owner's min-member annotation, which the Deployment controller
// copied from the Deployment to the ReplicaSet; the pods' own queue beats
// the owner's. Scaling up adds pods to the same group and leaves the group
// as it is: min-member, not the replica count, sizes it.
func TestDeploymentReplicasShareOneGroup(t *testing.T) {
	ns := namespace(t)
	spec := podSpec("volcano", res("cpu", "500m", "memory", "256Mi"), nil)
	spec.PriorityClassName = priorityClass
	d := createDeployment(t, deployment(ns, "train", 2,
		map[string]string{keys.GroupMinMember: "2", keys.VolcanoQueueName: "owner-queue"},
		template("train", map[string]string{keys.QueueName: "team-a"}, spec)))

	rs := replicaSet(t, d, "1", "made", nil)
	if rs.Annotations[keys.GroupMinMember] != "2" || rs.Annotations[keys.VolcanoQueueName] != "owner-queue" {
		t.Fatalf("the Deployment controller did not copy the annotations to the ReplicaSet: %v", rs.Annotations)
	}
	want := groupName(rs.UID)
	pg := minMemberFromOwner(t, allIn(t, podsOf(t, ns, rs.UID, 2, nil), want), 2)
	groupsAre(t, ns, want)
	ownedByController(t, pg, "apps/v1", "ReplicaSet", rs.Name, rs.UID)
	if pg.Spec.MinMember != 2 || pg.Spec.Queue != "team-a" || pg.Spec.PriorityClassName != priorityClass ||
		pg.Spec.NetworkTopology != nil || pg.Status.Phase != v1beta1.PodGroupPending {
		t.Errorf("spec %+v status %+v", pg.Spec, pg.Status)
	}
	// The owner's volcano.sh/ annotations are copied, even where the pod's
	// queue overrides the owner's for spec.queue.
	if pg.Annotations[keys.VolcanoQueueName] != "owner-queue" {
		t.Errorf("annotations: %v", pg.Annotations)
	}
	twoPods := res("count/pods", "2", "pods", "2", "cpu", "1", "requests.cpu", "1", "memory", "512Mi", "requests.memory", "512Mi")
	equalResources(t, pg.Spec.MinResources, twoPods)

	scale(t, "Deployment", ns, d.Name, 4)
	if scaled := replicaSet(t, d, "1", "scaled to 4", replicasAre(4)); scaled.UID != rs.UID {
		t.Fatalf("scaling made another ReplicaSet %s", scaled.Name)
	}
	after := allIn(t, podsOf(t, ns, rs.UID, 4, nil), want)
	groupsAre(t, ns, want)
	if after.Spec.MinMember != 2 {
		t.Errorf("minMember %d after scaling up: the owner's min-member (2) sizes the group, not the replica count", after.Spec.MinMember)
	}
	equalResources(t, after.Spec.MinResources, twoPods)
	// Nothing the group is made of changed, so it was not written again.
	if after.ResourceVersion != pg.ResourceVersion {
		t.Errorf("group rewritten on scale-up although nothing changed: resourceVersion %s -> %s", pg.ResourceVersion, after.ResourceVersion)
	}
}

// Scaling a Deployment to 0 scales its ReplicaSet to 0, and the
// WorkLoadSupport path deletes the ReplicaSet's group. Scaling up again
// reuses the ReplicaSet, and its new pods get a new group of the same name.
func TestDeploymentScaleToZeroDeletesGroup(t *testing.T) {
	ns := namespace(t)
	d := createDeployment(t, deployment(ns, "shrink", 2, nil, template("shrink", nil, podSpec("volcano", res("cpu", "100m"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	want := groupName(rs.UID)
	first := allIn(t, podsOf(t, ns, rs.UID, 2, nil), want)

	scale(t, "Deployment", ns, d.Name, 0)
	replicaSet(t, d, "1", "scaled to 0", replicasAre(0))
	groupGone(t, ns, want, "its ReplicaSet scaled to 0")
	podsOf(t, ns, rs.UID, 0, nil)
	groupsAre(t, ns)

	scale(t, "Deployment", ns, d.Name, 2)
	again := replicaSet(t, d, "1", "scaled to 2 again", replicasAre(2))
	if again.UID != rs.UID {
		t.Fatalf("the Deployment made another ReplicaSet %s instead of scaling %s", again.Name, rs.Name)
	}
	pg := allIn(t, podsOf(t, ns, rs.UID, 2, nil), want)
	if pg.UID == first.UID {
		t.Errorf("group %s not re-created", want)
	}
	groupsAre(t, ns, want)
}

// A template change makes the Deployment controller create a second
// ReplicaSet; its pods get a group of their own, built from the new
// template, while the old ReplicaSet's pods keep theirs. Pending pods never
// become available, so with maxUnavailable 0 the rollout stops at one new
// pod; allowing unavailability lets it scale the old ReplicaSet to 0, which
// deletes the old group.
func TestDeploymentRollingUpdateGivesNewReplicaSetItsGroup(t *testing.T) {
	ns := namespace(t)
	d := deployment(ns, "roll", 2, map[string]string{keys.GroupMinMember: "2"},
		template("roll", nil, podSpec("volcano", res("cpu", "500m"), nil)))
	d.Spec.Strategy = appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
		},
	}
	d = createDeployment(t, d)
	old := replicaSet(t, d, "1", "made", nil)
	oldGroup := groupName(old.UID)
	oldPods := podsOf(t, ns, old.UID, 2, nil)
	before := minMemberFromOwner(t, allIn(t, oldPods, oldGroup), 2)
	equalResources(t, before.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "1", "requests.cpu", "1"))

	patch(t, "Deployment", ns, d.Name, map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "resources": map[string]any{"requests": map[string]any{"cpu": "2"}},
		}}},
	}}})
	cur := replicaSet(t, d, "2", "surged to 1", replicasAre(1))
	if cur.UID == old.UID {
		t.Fatal("no second ReplicaSet")
	}
	newGroup := groupName(cur.UID)
	// The new ReplicaSet got min-member 2 from the Deployment.
	pg := minMemberFromOwner(t, allIn(t, podsOf(t, ns, cur.UID, 1, nil), newGroup), 2)
	ownedByController(t, pg, "apps/v1", "ReplicaSet", cur.Name, cur.UID)
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "4", "requests.cpu", "4"))
	// The old ReplicaSet still has its two pods, and they their group.
	replicaSet(t, d, "1", "still at 2", replicasAre(2))
	still := allIn(t, oldPods, oldGroup)
	equalResources(t, still.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "1", "requests.cpu", "1"))
	groupsAre(t, ns, oldGroup, newGroup)

	patch(t, "Deployment", ns, d.Name, map[string]any{"spec": map[string]any{"strategy": map[string]any{
		"rollingUpdate": map[string]any{"maxUnavailable": "100%"},
	}}})
	replicaSet(t, d, "1", "scaled to 0", replicasAre(0))
	groupGone(t, ns, oldGroup, "the old ReplicaSet scaled to 0")
	replicaSet(t, d, "2", "scaled to 2", replicasAre(2))
	allIn(t, podsOf(t, ns, cur.UID, 2, nil), newGroup)
	groupsAre(t, ns, newGroup)
}

// The Deployment controller copies the Deployment's annotations (all but
// its own revision/replica bookkeeping and kubectl's last-applied
// configuration) to its current ReplicaSet; the ReplicaSet's update brings
// the group up to date with the owner's queue and min-member, and what
// others wrote on the group survives.
func TestOwnerAnnotationChangeUpdatesGroup(t *testing.T) {
	ns := namespace(t)
	d := createDeployment(t, deployment(ns, "grow", 2, map[string]string{keys.VolcanoQueueName: "q1"},
		template("grow", nil, podSpec("volcano", res("cpu", "1"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	want := groupName(rs.UID)
	allIn(t, podsOf(t, ns, rs.UID, 2, nil), want)
	// Like minMemberFromOwner: the owner's queue may arrive with the
	// ReplicaSet's own event.
	pg := groupUntil(t, ns, want, "queue q1 from its owner", func(pg *v1beta1.PodGroup) bool { return pg.Spec.Queue == "q1" })
	if pg.Spec.MinMember != 1 {
		t.Fatalf("before: %+v", pg.Spec)
	}
	// What others wrote on the group must survive our update: a label, the
	// scheduler's condition and status counts, a user's minTaskMember. The
	// controller's cache holds none of these (framework.CacheRead), so a
	// full Update from it would erase them.
	patch(t, "PodGroup", ns, want, map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"team": "ml"}},
		"spec":     map[string]any{"minTaskMember": map[string]any{"worker": 1}},
		"status": map[string]any{"phase": "Inqueue", "running": 1, "conditions": []any{map[string]any{
			"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources",
			"message": "1/2 tasks in gang unschedulable", "transitionID": "t-1",
		}}},
	})

	patch(t, "Deployment", ns, d.Name, annotationsPatch(keys.VolcanoQueueName, "q2", keys.GroupMinMember, "2"))
	replicaSet(t, d, "1", "annotations copied from the Deployment", func(r *appsv1.ReplicaSet) bool {
		return r.Annotations[keys.VolcanoQueueName] == "q2" && r.Annotations[keys.GroupMinMember] == "2"
	})
	pg = groupUntil(t, ns, want, "queue q2 from the owner", func(pg *v1beta1.PodGroup) bool { return pg.Spec.Queue == "q2" })
	if pg.Spec.MinMember != 2 || pg.Annotations[keys.VolcanoQueueName] != "q2" || pg.Labels["team"] != "ml" {
		t.Errorf("after: spec %+v meta %+v", pg.Spec, pg.ObjectMeta)
	}
	if pg.Spec.MinTaskMember["worker"] != 1 || pg.Status.Phase != v1beta1.PodGroupInqueue || pg.Status.Running != 1 ||
		len(pg.Status.Conditions) != 1 || pg.Status.Conditions[0].TransitionID != "t-1" {
		t.Errorf("others' fields lost by the update: minTaskMember %v status %+v", pg.Spec.MinTaskMember, pg.Status)
	}
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "2", "requests.cpu", "2"))
	// An annotation change is not a template change: still one ReplicaSet.
	groupsAre(t, ns, want)
}

// Deleting a Deployment with the default (background) propagation: the
// garbage collector deletes its ReplicaSet, then what the ReplicaSet owned,
// the pods and the group.
func TestDeletedDeploymentsGroupIsGarbageCollected(t *testing.T) {
	ns := namespace(t)
	d := createDeployment(t, deployment(ns, "gone", 2, nil, template("gone", nil, podSpec("volcano", res("cpu", "100m"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	want := groupName(rs.UID)
	allIn(t, podsOf(t, ns, rs.UID, 2, nil), want)

	if err := env.kube.AppsV1().Deployments(ns).Delete(context.Background(), d.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	groupGone(t, ns, want, "the garbage collector, after its Deployment was deleted")
	eventually(t, "the ReplicaSet garbage-collected", func(ctx context.Context) (bool, error) {
		_, err := env.kube.AppsV1().ReplicaSets(ns).Get(ctx, rs.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	podsOf(t, ns, rs.UID, 0, nil)
	groupsAre(t, ns)
}

// The Deployment's volcano.sh/ annotations reach the group through the
// ReplicaSet (queue, preemptable, cooldown time) with its min-member;
// the pods' own settings beat them; other annotations are not inherited.
func TestInheritedAnnotations(t *testing.T) {
	ns := namespace(t)
	d := createDeployment(t, deployment(ns, "train", 3, map[string]string{
		keys.GroupMinMember:   "3",
		keys.VolcanoQueueName: "gpu-queue",
		keys.Preemptable:      "true",
		keys.CooldownTime:     "600s",
		"example.com/note":    "not a volcano key",
	}, template("train",
		// The pods override one inherited setting and add one of their own.
		map[string]string{keys.CooldownTime: "60s", keys.JDBMaxUnavailable: "1"},
		podSpec("volcano", res("cpu", "1", "memory", "1Gi"), nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	pg := minMemberFromOwner(t, allIn(t, podsOf(t, ns, rs.UID, 3, nil), groupName(rs.UID)), 3)
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
	for _, k := range []string{revisionAnnotation, "deployment.kubernetes.io/desired-replicas"} {
		if _, ok := pg.Annotations[k]; ok {
			t.Errorf("the ReplicaSet's %s must not reach the group", k)
		}
	}
}

func TestInvalidMinMember(t *testing.T) {
	ns := namespace(t)
	for name, v := range map[string]string{"negative": "-2", "word": "many"} {
		d := createDeployment(t, deployment(ns, name, 2, map[string]string{keys.GroupMinMember: v},
			template(name, nil, podSpec("volcano", res("cpu", "100m"), nil))))
		rs := replicaSet(t, d, "1", "made", nil)
		pg := allIn(t, podsOf(t, ns, rs.UID, 2, nil), groupName(rs.UID))
		if pg.Spec.MinMember != 1 {
			t.Errorf("min-member %q: minMember %d, want 1", v, pg.Spec.MinMember)
		}
		equalResources(t, pg.Spec.MinResources, res("count/pods", "1", "pods", "1", "cpu", "100m", "requests.cpu", "100m"))
	}
}

func TestGPURequestsWithLimits(t *testing.T) {
	ns := namespace(t)
	d := createDeployment(t, deployment(ns, "gpu", 1, map[string]string{keys.GroupMinMember: "2"}, template("gpu", nil,
		podSpec("volcano",
			res("cpu", "1", "memory", "1Gi", "nvidia.com/gpu", "1"),
			res("cpu", "2", "memory", "2Gi", "nvidia.com/gpu", "1")))))
	rs := replicaSet(t, d, "1", "made", nil)
	pg := minMemberFromOwner(t, allIn(t, podsOf(t, ns, rs.UID, 1, nil), groupName(rs.UID)), 2)
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

	if nt := groupOf(t, hard, groupName(hard.UID)).Spec.NetworkTopology; nt == nil ||
		nt.Mode != v1beta1.HardNetworkTopologyMode || ptr.Deref(nt.HighestTierAllowed, -1) != 2 {
		t.Errorf("hard (default mode): %+v", nt)
	}
	if nt := groupOf(t, soft, groupName(soft.UID)).Spec.NetworkTopology; nt == nil ||
		nt.Mode != v1beta1.SoftNetworkTopologyMode || nt.HighestTierAllowed != nil {
		t.Errorf("soft: %+v", nt)
	}
	if nt := groupOf(t, bad, groupName(bad.UID)).Spec.NetworkTopology; nt == nil ||
		nt.Mode != v1beta1.HardNetworkTopologyMode || ptr.Deref(nt.HighestTierAllowed, -1) != 1 {
		t.Errorf("invalid mode must keep hard: %+v", nt)
	}
	warningFor(t, ns, "bad", "InvalidNetworkTopology")
}

func TestPodWithExistingGroupNameIsLeftAlone(t *testing.T) {
	ns := namespace(t)
	pod := createPod(t, ns, "member", podSpec("volcano", nil, nil), withAnnotations(keys.KubeGroupName, "job-group"))
	settled(t, ns)
	notFound(t, ns, groupName(pod.UID))
	got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), "member", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := got.Annotations[keys.KubeGroupName]; g != "job-group" {
		t.Errorf("group-name overwritten: %q", g)
	}
}

// Neither a bare pod nor a Deployment of another scheduler gets a group.
func TestPodForAnotherSchedulerIsIgnored(t *testing.T) {
	ns := namespace(t)
	pod := createPod(t, ns, "other", podSpec("default-scheduler", nil, nil))
	d := createDeployment(t, deployment(ns, "plain", 2, map[string]string{keys.GroupMinMember: "2"},
		template("plain", nil, podSpec("default-scheduler", nil, nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	pods := podsOf(t, ns, rs.UID, 2, nil)
	s := settled(t, ns)
	groupsAre(t, ns, groupName(s.UID))
	for _, p := range append(pods, pod) {
		got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Annotations[keys.KubeGroupName]; ok {
			t.Errorf("pod %s of another scheduler annotated: %v", p.Name, got.Annotations)
		}
	}
}

// A failure that retrying cannot fix (the queue name breaks the PodGroup
// schema) is retried --max-requeue-num times, then dropped with a Warning:
// on the pod for the pod path, on the ReplicaSet for the workload path.
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

	d := createDeployment(t, deployment(ns, "badqueue-deploy", 1, nil,
		template("badqueue-deploy", map[string]string{keys.QueueName: "Not_A_Queue"}, podSpec("volcano", nil, nil))))
	rs := replicaSet(t, d, "1", "made", nil)
	pod := podsOf(t, ns, rs.UID, 1, nil)[0]
	warningFor(t, ns, rs.Name, "PodGroupSyncFailed")
	warningFor(t, ns, pod.Name, "PodGroupSyncFailed")
	notFound(t, ns, groupName(rs.UID))
}

// The real StatefulSet controller, with Parallel pod management (the
// default OrderedReady would make only pod 0, as no pod ever becomes
// Ready) and a rolling update partitioned at ordinal 1. After a template
// change it deletes web-1, unavailable (Pending) on the old revision, and
// makes it again on the update revision (Kubernetes 1.37, Parallel: old
// unavailable pods are replaced at once), while web-0 stays on the current
// revision; status.currentRevision never moves, as no pod becomes Ready.
// The group follows the pods of status.updateRevision: web-0 sorts first,
// so were the revision ignored the group would be built from the old
// template.
func TestStatefulSetFollowsUpdateRevision(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	sts, err := env.kube.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Annotations: map[string]string{keys.GroupMinMember: "2"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](2),
			ServiceName:         "web",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:            template("web", nil, podSpec("volcano", res("cpu", "100m"), nil)),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type:          appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := groupName(sts.UID)
	rev1 := updateRevision(t, ns, "web", "")
	atRev := func(rev string) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool { return p.Labels[appsv1.ControllerRevisionHashLabelKey] == rev }
	}
	first := podsOf(t, ns, sts.UID, 2, atRev(rev1))
	pg := minMemberFromOwner(t, allIn(t, first, want), 2)
	before := pg
	ownedByController(t, pg, "apps/v1", "StatefulSet", "web", sts.UID)
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "200m", "requests.cpu", "200m"))

	patch(t, "StatefulSet", ns, "web", map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "resources": map[string]any{"requests": map[string]any{"cpu": "300m"}},
		}}},
	}}})
	rev2 := updateRevision(t, ns, "web", rev1)
	pods := podsOf(t, ns, sts.UID, 2, func(p *corev1.Pod) bool {
		return p.Name == "web-0" && atRev(rev1)(p) || p.Name == "web-1" && atRev(rev2)(p)
	})
	if pods[0].UID != first[0].UID {
		t.Errorf("web-0 was replaced although the partition keeps it")
	}
	if pods[1].UID == first[1].UID {
		t.Fatalf("web-1 was not replaced")
	}
	got, err := env.kube.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.CurrentRevision != rev1 {
		t.Errorf("status.currentRevision %q, want %q: pods that never become Ready never complete an update", got.Status.CurrentRevision, rev1)
	}
	allIn(t, pods, want) // the new web-1 joins the same group, which is not replaced
	if pg := getGroup(t, ns, want); pg.UID != before.UID {
		t.Errorf("group re-created on the update")
	}

	// A StatefulSet change is synced from the pods of the update revision:
	// the inherited annotation shows that sync happened; the resources show
	// it was built from web-1, not web-0. (That the new web-1 alone brings
	// the group to the new template, when every StatefulSet event came
	// before it, is TestStatefulSetGroupFollowsNewTemplate.)
	patch(t, "StatefulSet", ns, "web", annotationsPatch(keys.RevocableZone, "rz1"))
	pg = groupUntil(t, ns, want, "re-synced from the StatefulSet", func(pg *v1beta1.PodGroup) bool {
		return pg.Annotations[keys.RevocableZone] == "rz1"
	})
	if pg.Spec.MinMember != 2 {
		t.Errorf("minMember %d", pg.Spec.MinMember)
	}
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "600m", "requests.cpu", "600m"))
	groupsAre(t, ns, want)
}

// updateRevision waits until the StatefulSet controller has set
// status.updateRevision to something other than not, and returns it.
func updateRevision(t *testing.T, ns, name, not string) string {
	t.Helper()
	var rev string
	eventually(t, "status.updateRevision of StatefulSet "+name, func(ctx context.Context) (bool, error) {
		sts, err := env.kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		rev = sts.Status.UpdateRevision
		return rev != "" && rev != not, nil
	})
	return rev
}

// A batch Job's pods share one group named after the Job, built when the
// first of them is created, with the Job's min-member and queue (Jobs have
// no workload path: the pod path reads the Job as an owner). Deleting the
// Job lets the garbage collector delete the group.
func TestJobPodsShareOneGroup(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	j, err := env.kube.BatchV1().Jobs(ns).Create(ctx, job(ns, "batch", 3, 6,
		map[string]string{keys.GroupMinMember: "3", keys.VolcanoQueueName: "batch-q"},
		podSpec("volcano", res("cpu", "250m"), nil)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := groupName(j.UID)
	pg := allIn(t, podsOf(t, ns, j.UID, 3, nil), want)
	groupsAre(t, ns, want)
	ownedByController(t, pg, "batch/v1", "Job", "batch", j.UID)
	if pg.Spec.MinMember != 3 || pg.Spec.Queue != "batch-q" || pg.Annotations[keys.VolcanoQueueName] != "batch-q" {
		t.Errorf("spec %+v annotations %v", pg.Spec, pg.Annotations)
	}
	equalResources(t, pg.Spec.MinResources, res("count/pods", "3", "pods", "3", "cpu", "750m", "requests.cpu", "750m"))

	if err := env.kube.BatchV1().Jobs(ns).Delete(ctx, "batch", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	groupGone(t, ns, want, "the garbage collector, after its Job was deleted")
}

// Pods that already name another group (a LeaderWorkerSet makes its own)
// are left out of the workload's group and keep their annotation: a
// Deployment whose pods all carry one gets no group from us; in a
// Deployment where one pod is moved to another group, that pod no longer
// counts when the group is rebuilt.
func TestWorkloadLeavesPodsOfOtherGroupsAlone(t *testing.T) {
	ns := namespace(t)
	theirs := createDeployment(t, deployment(ns, "lws", 2, nil,
		template("lws", map[string]string{keys.KubeGroupName: "lws-own-group"}, podSpec("volcano", nil, nil))))
	theirsRS := replicaSet(t, theirs, "1", "made", nil)
	theirPods := podsOf(t, ns, theirsRS.UID, 2, nil)

	mixed := createDeployment(t, deployment(ns, "mixed", 2, nil, template("mixed", nil, podSpec("volcano", res("cpu", "100m"), nil))))
	mixedRS := replicaSet(t, mixed, "1", "made", nil)
	want := groupName(mixedRS.UID)
	mixedPods := podsOf(t, ns, mixedRS.UID, 2, nil)
	allIn(t, mixedPods, want)
	// The pod that sorts first is the one the group is built from; moved
	// to another group, with a cooldown the group would take from it.
	moved := mixedPods[0]
	patch(t, "Pod", ns, moved.Name, annotationsPatch(keys.KubeGroupName, "lws-own-group", keys.CooldownTime, "999s"))
	// Re-sync the ReplicaSet: the Deployment controller copies this to it.
	patch(t, "Deployment", ns, mixed.Name, annotationsPatch(keys.Preemptable, "true"))
	pg := groupUntil(t, ns, want, "re-synced from the ReplicaSet", func(pg *v1beta1.PodGroup) bool {
		return pg.Annotations[keys.Preemptable] == "true"
	})
	if c, ok := pg.Annotations[keys.CooldownTime]; ok {
		t.Errorf("group built from a pod of another group (cooldown-time %q)", c)
	}

	settled(t, ns)
	notFound(t, ns, groupName(theirsRS.UID))
	for _, p := range append(theirPods, moved) {
		got, err := env.kube.CoreV1().Pods(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g := got.Annotations[keys.KubeGroupName]; g != "lws-own-group" {
			t.Errorf("pod %s of another group moved to %q", p.Name, g)
		}
	}
}
