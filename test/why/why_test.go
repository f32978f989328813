package why

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/why/analysis"
)

const (
	open    = schedulingv1beta1.QueueStateOpen
	closed  = schedulingv1beta1.QueueStateClosed
	closing = schedulingv1beta1.QueueStateClosing
	pending = schedulingv1beta1.PodGroupPending
	inqueue = schedulingv1beta1.PodGroupInqueue
	running = schedulingv1beta1.PodGroupRunning
)

// A group that runs in an Open queue with room: nothing blocks, exit 0.
func TestNothingBlocks(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-fine", queueSpec{capability: "cpu=8"}, open, "cpu=2")
	pg := makeGroup(t, ns, "train", "why-fine", 2, "cpu=2", running)
	makePod(t, ns, "train-0", "train", "volcano", "1", "node-1")
	makePod(t, ns, "train-1", "train", "volcano", "1", "node-1")
	updateGroup(t, pg, func(pg *schedulingv1beta1.PodGroup) { pg.Status.Running = 2 })
	rep := why(t, "podgroup", "train", "-n", ns)
	onlyBlocking(t, rep)
	if rep.Status != "Running" || len(rep.Checked) == 0 || !strings.Contains(rep.Checked[0].Message, `scheduler "volcano" runs: Lease volcano-system/volcano held by volcano-scheduler-7d9f_1b2c`) {
		t.Errorf("status %q, checked %+v", rep.Status, rep.Checked)
	}
	// A Pending group with nothing against it is not blocked either.
	makeGroup(t, ns, "next", "why-fine", 1, "cpu=1", pending)
	makePod(t, ns, "next-0", "next", "volcano", "1", "")
	onlyBlocking(t, why(t, "pg", "next", "-n", ns))
}

// A typo in schedulerName: no scheduler answers, no event at all.
func TestSchedulerUnknown(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-typo", queueSpec{}, open, "")
	makeGroup(t, ns, "train", "why-typo", 1, "", pending)
	makePod(t, ns, "train-0", "train", "vocalno", "1", "")
	rep := why(t, "pod", "train-0", "-n", ns)
	onlyBlocking(t, rep, analysis.SchedulerUnknown)
	r := reason(t, rep, analysis.SchedulerUnknown, true)
	contains(t, "message", r.Message, `"vocalno"`, `did you mean "volcano"?`)
	contains(t, "fix", r.Fix, "schedulerName: volcano")
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "no Lease volcano-system/vocalno", `no event from "vocalno"`, `no pod placed by "vocalno" seen`)
}

// Volcano's scheduler (here under the name volcano-b) holds no Lease and
// has written nothing.
func TestSchedulerNotRunning(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-nosched", queueSpec{}, open, "")
	makeGroup(t, ns, "train", "why-nosched", 1, "", pending)
	makePod(t, ns, "train-0", "train", "volcano-b", "1", "")
	rep := why(t, "pod", "train-0", "-n", ns, "--scheduler-name", "volcano-b")
	onlyBlocking(t, rep, analysis.SchedulerNotRunning)
	r := reason(t, rep, analysis.SchedulerNotRunning, true)
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "no Lease volcano-system/volcano-b", `no event from "volcano-b"`)
}

// The pod names a PodGroup that does not exist.
func TestPodGroupMissing(t *testing.T) {
	ns := namespace(t)
	makePod(t, ns, "train-0", "ghost", "volcano", "1", "")
	rep := why(t, "pod", "train-0", "-n", ns)
	onlyBlocking(t, rep, analysis.PodGroupMissing)
	r := reason(t, rep, analysis.PodGroupMissing, true)
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "annotation scheduling.k8s.io/group-name=ghost", "no podgroup ghost in any namespace")
}

// The pod names a PodGroup of another namespace.
func TestPodGroupInOtherNamespace(t *testing.T) {
	ns := namespace(t)
	other := ns + "-b"
	createNamespace(t, other)
	makeQueue(t, "why-otherns", queueSpec{}, open, "")
	makeGroup(t, other, "only-there", "why-otherns", 1, "", pending)
	makePod(t, ns, "train-0", "only-there", "volcano", "1", "")
	rep := why(t, "pod", "train-0", "-n", ns)
	r := reason(t, rep, analysis.PodGroupInOtherNamespace, true)
	contains(t, "message", r.Message, "which is in namespace "+other)
	contains(t, "fix", r.Fix, "create PodGroup only-there in namespace "+ns)
}

// A Volcano Job without a PodGroup waits for Volcano's job controller,
// which does not run; a plain pod waits for a podgroup controller.
func TestPodGroupControllerNotRunning(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-nojc", queueSpec{}, open, "")
	j := &batchv1alpha1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns},
		Spec: batchv1alpha1.JobSpec{SchedulerName: "volcano", Queue: "why-nojc", MinAvailable: 2, Tasks: []batchv1alpha1.TaskSpec{{Name: "worker", Replicas: 2,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "worker", Image: "busybox:1.36"}}}}}}}}
	if _, err := env.vc.BatchV1alpha1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rep := why(t, "job", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.PodGroupControllerNotRunning)
	r := reason(t, rep, analysis.PodGroupControllerNotRunning, true)
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "no Lease volcano-system/vc-controller-manager")

	makePod(t, ns, "plain", "", "volcano", "1", "")
	rep = why(t, "pod", "plain", "-n", ns)
	r = reason(t, rep, analysis.PodGroupControllerNotRunning, true)
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "no scheduling.k8s.io/group-name annotation", "serve: no Lease volcano-system/kubectl-vc-serve")
}

// minMember 4 with one pod.
func TestNotEnoughPods(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-fewpods", queueSpec{}, open, "")
	makeGroup(t, ns, "train", "why-fewpods", 4, "cpu=4", inqueue)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "podgroup", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.NotEnoughPods)
	r := reason(t, rep, analysis.NotEnoughPods, true)
	contains(t, "message", r.Message, "minMember is 4 but only 1 pod(s) exist")
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "spec.minMember=4", "1 live pod(s) with scheduling.k8s.io/group-name=train: train-0")
}

func TestQueueMissing(t *testing.T) {
	ns := namespace(t)
	makeGroup(t, ns, "train", "why-nosuchqueue", 1, "", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "pg", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.QueueMissing)
	contains(t, "fix", reason(t, rep, analysis.QueueMissing, true).Fix, "kubectl vc queue create why-nosuchqueue")
}

// A queue closed by its parent: both are reported, with who closed it.
func TestQueueClosedByParent(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-team", queueSpec{}, closed, "")
	q := makeQueue(t, "why-team-batch", queueSpec{parent: "why-team"}, closed, "")
	q.Annotations = map[string]string{keys.ClosedByParent: "true"}
	if _, err := env.vc.SchedulingV1beta1().Queues().Update(context.Background(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	schedulerEventQueue(t, "why-team", "CloseQueue", "Close queue succeed")
	makeGroup(t, ns, "train", "why-team-batch", 1, "", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "podgroup", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.QueueClosed, analysis.ParentQueueClosed)
	r := reason(t, rep, analysis.QueueClosed, true)
	contains(t, "message", r.Message, "queue why-team-batch is Closed, closed by its parent why-team")
	contains(t, "fix", r.Fix, "kubectl vc queue open why-team")
	p := reason(t, rep, analysis.ParentQueueClosed, true)
	contains(t, "parent", p.Message, "queue why-team above why-team-batch is Closed, by a CloseQueue Command (applied and deleted)")
}

// A queue being closed by a CloseQueue Command that 'queue close' wrote.
func TestQueueClosedByCommand(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-closing", queueSpec{}, open, "")
	if r := vc(t, "queue", "close", "why-closing"); r.Code != 0 {
		t.Fatalf("queue close: %s", r)
	}
	q, _ := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), "why-closing", metav1.GetOptions{})
	q.Status.State = closing
	if _, err := env.vc.SchedulingV1beta1().Queues().UpdateStatus(context.Background(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	makeGroup(t, ns, "train", "why-closing", 1, "", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "podgroup", "train", "-n", ns)
	r := reason(t, rep, analysis.QueueClosed, true)
	contains(t, "message", r.Message, "queue why-closing is Closing, by Command default/why-closing-closequeue-")
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "action CloseQueue created", "not applied yet")
	t.Cleanup(func() {
		_ = env.vc.BusV1alpha1().Commands("default").DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
	})
}

func TestQueueNotLeaf(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-parent", queueSpec{}, open, "")
	makeQueue(t, "why-parent-child", queueSpec{parent: "why-parent"}, open, "")
	makeGroup(t, ns, "train", "why-parent", 1, "", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "pg", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.QueueNotLeaf)
	contains(t, "message", reason(t, rep, analysis.QueueNotLeaf, true).Message, "child queues (why-parent-child)")

	qrep := why(t, "queue", "why-parent")
	onlyBlocking(t, qrep, analysis.QueueNotLeaf, analysis.PodGroupsWaiting)
}

// Allocated (as the scheduler writes it) plus the Inqueue podgroups plus
// what the group needs is over the capability.
func TestQueueCapabilityReached(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-full", queueSpec{capability: "cpu=4,memory=8Gi"}, open, "cpu=2,memory=2Gi")
	makeGroup(t, ns, "earlier", "why-full", 1, "cpu=1", inqueue)
	makePod(t, ns, "earlier-0", "earlier", "volcano", "1", "")
	makeGroup(t, ns, "train", "why-full", 2, "cpu=2,memory=2Gi", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	makePod(t, ns, "train-1", "train", "volcano", "1", "")
	rep := why(t, "podgroup", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.QueueCapabilityReached)
	r := reason(t, rep, analysis.QueueCapabilityReached, true)
	if len(r.Resources) != 1 || r.Resources[0] != (analysis.ResourceUse{Resource: "cpu", Needed: "2", Used: "3", Allocated: "2", Inqueue: "1", Limit: "4"}) {
		t.Errorf("resources: %+v", r.Resources)
	}
	contains(t, "message", r.Message, "cpu 2 allocated + 1 Inqueue + 2 needed > 4")
	contains(t, "fix", r.Fix, "kubectl vc queue update why-full --capability cpu=5,memory=8Gi")

	// The queue's own view: full while work waits.
	qrep := why(t, "queue", "why-full")
	if qrep.Blocked != true {
		t.Errorf("queue not blocked: %+v", qrep.Reasons)
	}
}

func TestParentCapabilityReached(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-org", queueSpec{capability: "cpu=6"}, open, "cpu=6")
	makeQueue(t, "why-org-leaf", queueSpec{parent: "why-org"}, open, "cpu=1")
	makeGroup(t, ns, "train", "why-org-leaf", 1, "cpu=1", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "pg", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.ParentCapabilityReached)
	r := reason(t, rep, analysis.ParentCapabilityReached, true)
	if r.Object != "queue/why-org" || len(r.Resources) != 1 || r.Resources[0].Used != "6" || r.Resources[0].Limit != "6" || r.Resources[0].Needed != "1" {
		t.Errorf("%+v", r)
	}
}

// Over its deserved share while another queue waits.
func TestQueueOverDeserved(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-greedy", queueSpec{deserved: "cpu=2"}, open, "cpu=3")
	makeQueue(t, "why-starved", queueSpec{}, open, "")
	makeGroup(t, ns, "waits", "why-starved", 1, "cpu=1", pending)
	makeGroup(t, ns, "train", "why-greedy", 1, "cpu=1", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "pg", "train", "-n", ns)
	r := reason(t, rep, analysis.QueueOverDeserved, true)
	if len(r.Resources) != 1 || r.Resources[0].Allocated != "3" || r.Resources[0].Limit != "2" {
		t.Errorf("%+v", r.Resources)
	}
	contains(t, "message", r.Message, "cpu 3 allocated of 2", "podgroup(s) of other queues wait")
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "queue/why-greedy spec.deserved cpu=2", "queue/why-greedy status.allocated cpu=3", "waiting in other queues: ")
}

func TestMinResourcesOverCapability(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-small", queueSpec{capability: "cpu=2"}, open, "")
	makeGroup(t, ns, "train", "why-small", 4, "cpu=4", pending)
	for _, n := range []string{"train-0", "train-1", "train-2", "train-3"} {
		makePod(t, ns, n, "train", "volcano", "1", "")
	}
	rep := why(t, "pg", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.MinResourcesOverCapability)
	r := reason(t, rep, analysis.MinResourcesOverCapability, true)
	if len(r.Resources) != 1 || r.Resources[0] != (analysis.ResourceUse{Resource: "cpu", Needed: "4", Limit: "2"}) {
		t.Errorf("%+v", r.Resources)
	}
}

// More GPUs than any node has (and more CPU than the one node's 8).
func TestMinResourcesOverCluster(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-gpu", queueSpec{}, open, "")
	makeGroup(t, ns, "train", "why-gpu", 1, "cpu=16,nvidia.com/gpu=2", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	rep := why(t, "pg", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.MinResourcesOverCluster)
	r := reason(t, rep, analysis.MinResourcesOverCluster, true)
	want := []analysis.ResourceUse{{Resource: "cpu", Needed: "16", Limit: "8"}, {Resource: "nvidia.com/gpu", Needed: "2", Limit: "0"}}
	if len(r.Resources) != 2 || r.Resources[0] != want[0] || r.Resources[1] != want[1] {
		t.Errorf("%+v", r.Resources)
	}
}

// A Closing queue held by a Completed podgroup that still has minResources.
func TestStalePodGroups(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-stale", queueSpec{}, closing, "")
	makeGroup(t, ns, "done", "why-stale", 2, "cpu=2", schedulingv1beta1.PodGroupCompleted)
	rep := why(t, "queue", "why-stale")
	onlyBlocking(t, rep, analysis.QueueClosed, analysis.StalePodGroups)
	r := reason(t, rep, analysis.StalePodGroups, true)
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), ns+"/done (Completed)")
}

// The scheduler's own words: the gang condition and events, as Volcano's
// gang plugin and scheduler cache write them.
func TestUnschedulable(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-gang", queueSpec{}, open, "")
	pg := makeGroup(t, ns, "train", "why-gang", 4, "cpu=4", inqueue)
	var pods []*corev1.Pod
	for _, n := range []string{"train-0", "train-1", "train-2", "train-3"} {
		pods = append(pods, makePod(t, ns, n, "train", "volcano", "2", ""))
	}
	msg := "3/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; Pending: 1 Schedulable, 3 Unschedulable. Origin reason is train-1: 0/1 nodes are unavailable: 1 Insufficient cpu."
	pg = updateGroup(t, pg, func(pg *schedulingv1beta1.PodGroup) {
		pg.Status.Conditions = []schedulingv1beta1.PodGroupCondition{{Type: schedulingv1beta1.PodGroupUnschedulableType, Status: corev1.ConditionTrue,
			TransitionID: "6c5f9e54-2b5c-4d0b-9a0e-0f8f8f0c1a11", LastTransitionTime: metav1.Now(), Reason: "NotEnoughResources", Message: msg}}
	})
	schedulerEvent(t, pg, "PodGroup", "scheduling.volcano.sh/v1beta1", corev1.EventTypeWarning, "Unschedulable", "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable; Pending: 1 Schedulable, 3 Unschedulable", 12)
	schedulerEvent(t, pods[1], "Pod", "v1", corev1.EventTypeWarning, "FailedScheduling", "0/1 nodes are unavailable: 1 Insufficient cpu.", 12)
	rep := why(t, "podgroup", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.Unschedulable)
	r := reason(t, rep, analysis.Unschedulable, true)
	if r.Gang == nil || *r.Gang != (analysis.Gang{MinMember: 4, Pods: 4, Placeable: 1, Unplaceable: 3}) {
		t.Errorf("gang %+v", r.Gang)
	}
	contains(t, "message", r.Message, "needs 4 pods at once (minMember), 1 can be placed, 3 cannot", "1 Insufficient cpu")
	contains(t, "evidence", strings.Join(r.Evidence, "\n"), "condition Unschedulable=True reason NotEnoughResources", "event Warning FailedScheduling on pod/train-1 from volcano", "(x12)")

	// The pod's view leads to the same group.
	prep := why(t, "pod", "train-1", "-n", ns)
	onlyBlocking(t, prep, analysis.Unschedulable)
}

// No condition yet, only the enqueue event of the capacity plugin.
func TestSchedulerEvents(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-events", queueSpec{}, open, "")
	pg := makeGroup(t, ns, "train", "why-events", 1, "cpu=1", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	schedulerEvent(t, pg, "PodGroup", "scheduling.volcano.sh/v1beta1", corev1.EventTypeNormal, "Unschedulable", "queue resource quota insufficient: insufficient cpu", 5)
	rep := why(t, "pg", "train", "-n", ns)
	onlyBlocking(t, rep, analysis.SchedulerEvents)
	contains(t, "evidence", strings.Join(reason(t, rep, analysis.SchedulerEvents, true).Evidence, "\n"), `"queue resource quota insufficient: insufficient cpu"`)
}

// Bad input: one line on stderr, nothing on stdout, non-zero.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"why"}, "name what to explain: kubectl vc why (job|podgroup|pod|queue) NAME"},
		{[]string{"why", "deployment", "x"}, `unknown kind "deployment": use job, podgroup, pod or queue`},
		{[]string{"why", "pod"}, "name the pod to explain"},
		{[]string{"why", "pod", "a", "b"}, "accepts at most 2 arg(s)"},
		{[]string{"why", "pod", "Bad_Name"}, `invalid pod name "Bad_Name"`},
		{[]string{"why", "pod", "nope", "-n", "default"}, `pod "nope" not found in namespace "default"`},
		{[]string{"why", "queue", "nope"}, `queue "nope" not found`},
		{[]string{"why", "job", "nope"}, `job "nope" not found in namespace "default"`},
		{[]string{"why", "queue", "root", "-o", "wide"}, `unknown output format "wide": use one of json, yaml`},
		{[]string{"why", "queue", "root", "--chunk-size", "-1"}, "invalid --chunk-size -1"},
	} {
		r := vc(t, c.args...)
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if r.Code == 0 || r.Stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("kubectl-vc %s: want non-zero, no output and one error line containing %q; got:\n%s", strings.Join(c.args, " "), c.want, r)
		}
	}
}

// describe ends with the verdict of why and points to it.
func TestDescribeEndsWithWhy(t *testing.T) {
	ns := namespace(t)
	makeQueue(t, "why-describe", queueSpec{}, closed, "")
	makeGroup(t, ns, "train", "why-describe", 1, "", pending)
	makePod(t, ns, "train-0", "train", "volcano", "1", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"podgroup", "describe", "train", "-n", ns}, "Why:  blocked by QueueClosed; see 'kubectl vc why podgroup train -n " + ns + "'"},
		{[]string{"queue", "describe", "why-describe"}, "Why:  blocked by QueueClosed, PodGroupsWaiting; see 'kubectl vc why queue why-describe'"},
	} {
		r := vc(t, c.args...)
		out := strings.TrimRight(r.Stdout, "\n")
		last := out[strings.LastIndex(out, "\n")+1:]
		if r.Code != 0 || !strings.HasPrefix(last, "Why:") || !strings.Contains(strings.Join(strings.Fields(last), " "), strings.Join(strings.Fields(c.want), " ")) {
			t.Errorf("%v: last line %q, want %q\n%s", c.args, last, c.want, r)
		}
		t.Logf("%s", r.Stdout)
	}
}

// schedulerEventQueue records the event Volcano's queue controller writes
// when it applies a CloseQueue Command (in namespace default: queues are
// cluster-scoped).
func schedulerEventQueue(t *testing.T, queue, reason, msg string) {
	t.Helper()
	q, err := env.vc.SchedulingV1beta1().Queues().Get(context.Background(), queue, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{GenerateName: queue + ".", Namespace: metav1.NamespaceDefault},
		InvolvedObject: corev1.ObjectReference{Kind: "Queue", APIVersion: "scheduling.volcano.sh/v1beta1", Name: queue, UID: q.UID},
		Reason:         reason, Message: msg, Type: corev1.EventTypeNormal, Count: 1,
		Source: corev1.EventSource{Component: "vc-controller-manager"}, FirstTimestamp: now, LastTimestamp: now}
	e, err = env.kube.CoreV1().Events(metav1.NamespaceDefault).Create(context.Background(), e, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// why matches a queue's events by its name, so a later run's queue of
	// the same name would see this one.
	t.Cleanup(func() {
		if err := env.kube.CoreV1().Events(metav1.NamespaceDefault).Delete(context.Background(), e.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
}
