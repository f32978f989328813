package podgroup

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// A Job's pods and the Job reach the controller through two watch
// streams, so it may see the pods first. Their group must then wait for
// the Job rather than be built without it (minMember 1, the default queue:
// a group the scheduler would act on), and be made from what the Job says
// once it is seen. Later changes of the Job's annotations reach the group
// too. The test holds the Jobs' watch back while the real Job controller
// makes the pods, so the order is certain. (A DaemonSet takes the same
// path; it makes no pod here, as no node runs.)
func TestJobSeenAfterItsPods(t *testing.T) {
	cp := ownCluster(t, controlplane.Controllers)
	jobs := newWatchGate("jobs")
	// One worker: requests are handled in the order they came, so the
	// sentinel below is handled after every pod of the Job.
	startManager(t, cp, managerConfig{wrap: jobs.wrap}, "--scheduler-name=volcano", "--workers-podgroup=1")
	ns := namespace(t)
	ctx := context.Background()

	jobs.hold()
	j, err := env.kube.BatchV1().Jobs(ns).Create(ctx, job(ns, "late", 3, 3,
		map[string]string{keys.GroupMinMember: "3", keys.VolcanoQueueName: "late-q"},
		podSpec("volcano", res("cpu", "250m"), nil)), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := groupName(j.UID)
	pods := podsOf(t, ns, j.UID, 3, nil)
	settled(t, ns)
	notFound(t, ns, want)
	for _, p := range pods {
		got, err := env.kube.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := got.Annotations[keys.KubeGroupName]; ok {
			t.Errorf("pod %s annotated with %q before its Job was seen", p.Name, g)
		}
	}

	jobs.release()
	pg := allIn(t, pods, want)
	ownedByController(t, pg, "batch/v1", "Job", "late", j.UID)
	if pg.Spec.MinMember != 3 || pg.Spec.Queue != "late-q" {
		t.Errorf("spec %+v, want the Job's minMember 3 and queue late-q", pg.Spec)
	}
	equalResources(t, pg.Spec.MinResources, res("count/pods", "3", "pods", "3", "cpu", "750m", "requests.cpu", "750m"))

	data := []byte(`{"metadata":{"annotations":{"` + keys.GroupMinMember + `":"2"}}}`)
	if _, err := env.kube.BatchV1().Jobs(ns).Patch(ctx, "late", types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pg = groupUntil(t, ns, want, "minMember 2 from the Job's new annotation", func(pg *v1beta1.PodGroup) bool { return pg.Spec.MinMember == 2 })
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "500m", "requests.cpu", "500m"))
}

// After a template change the StatefulSet controller writes the new
// status.updateRevision and then makes the pod of the new revision; the
// StatefulSet's events may all be handled before that pod reaches the
// controller's cache, and then it has nothing to rebuild the group from.
// The new pod itself must bring the group to the new template. The test
// holds the pods' watch back during the update, so that the controller
// handles every StatefulSet event without the new pod.
func TestStatefulSetGroupFollowsNewTemplate(t *testing.T) {
	cp := ownCluster(t, controlplane.Controllers)
	podWatch := newWatchGate("pods")
	startManager(t, cp, managerConfig{wrap: podWatch.wrap}, "--scheduler-name=volcano", "--workers-podgroup=1")
	ns := namespace(t)
	ctx := context.Background()

	sts := func(name string, replicas, partition int32) *appsv1.StatefulSet {
		s, err := env.kube.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{keys.GroupMinMember: "2"}},
			Spec: appsv1.StatefulSetSpec{
				Replicas:            ptr.To(replicas),
				ServiceName:         name,
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template:            template(name, nil, podSpec("volcano", res("cpu", "100m"), nil)),
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
					Type:          appsv1.RollingUpdateStatefulSetStrategyType,
					RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(partition)},
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	web := sts("web", 2, 1)
	// probe's group shows when the controller has handled the StatefulSet
	// events that came before a change of probe (same watch, one worker).
	probe := sts("probe", 1, 0)
	want := groupName(web.UID)
	rev1 := updateRevision(t, ns, "web", "")
	atRev := func(rev string) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool { return p.Labels[appsv1.ControllerRevisionHashLabelKey] == rev }
	}
	old := minMemberFromOwner(t, allIn(t, podsOf(t, ns, web.UID, 2, atRev(rev1)), want), 2)
	oldResources := res("count/pods", "2", "pods", "2", "cpu", "200m", "requests.cpu", "200m")
	equalResources(t, old.Spec.MinResources, oldResources)
	allIn(t, podsOf(t, ns, probe.UID, 1, nil), groupName(probe.UID))

	podWatch.hold()
	patch(t, "StatefulSet", ns, "web", map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{
			"name": "main", "resources": map[string]any{"requests": map[string]any{"cpu": "300m"}},
		}}},
	}}})
	rev2 := updateRevision(t, ns, "web", rev1)
	podsOf(t, ns, web.UID, 2, func(p *corev1.Pod) bool {
		return p.Name == "web-0" && atRev(rev1)(p) || p.Name == "web-1" && atRev(rev2)(p)
	})
	eventually(t, "StatefulSet web's status written for the update", func(ctx context.Context) (bool, error) {
		s, err := env.kube.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 1 && s.Status.Replicas == 2, nil
	})
	patch(t, "StatefulSet", ns, "probe", annotationsPatch(keys.RevocableZone, "probe"))
	groupUntil(t, ns, groupName(probe.UID), "probe re-synced", func(pg *v1beta1.PodGroup) bool {
		return pg.Annotations[keys.RevocableZone] == "probe"
	})
	// Every event of web was handled without its new pod: the group is
	// still the old template's.
	equalResources(t, getGroup(t, ns, want).Spec.MinResources, oldResources)

	podWatch.release()
	pg := groupUntil(t, ns, want, "built from the new template (2 x 300m)", func(pg *v1beta1.PodGroup) bool {
		if pg.Spec.MinResources == nil {
			return false
		}
		q, ok := (*pg.Spec.MinResources)["cpu"]
		return ok && q.MilliValue() == 600
	})
	equalResources(t, pg.Spec.MinResources, res("count/pods", "2", "pods", "2", "cpu", "600m", "requests.cpu", "600m"))
	if pg.UID != old.UID {
		t.Errorf("group re-created")
	}
}
