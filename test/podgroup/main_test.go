// Package podgroup proves the podgroup controller against a real local
// cluster at the controlplane.Controllers level: etcd, kube-apiserver (with
// the ServiceAccount admission plugin), the real kube-controller-manager and
// kube-scheduler. Workloads are real: the tests create Deployments,
// StatefulSets and Jobs, and the Kubernetes controllers make their
// ReplicaSets, pods, revisions and status; the garbage collector removes
// what a deleted owner owned. No test creates a workload's pods or writes
// owner references or a workload's status (one re-annotates a pod, as the
// controller of another group would). No node runs, so every pod stays
// Pending, which the podgroup controller does not mind: it reads pods,
// their owners and annotations, and the pods ask for the volcano scheduler,
// which does not run here.
//
// DaemonSets are not covered here: without a node a DaemonSet makes no pod.
// The node-level suite (test/install, TestServeInCluster) covers them.
//
// The podgroup commands ('kubectl vc podgroup ...', the cli_*_test.go
// files) are proven here too, the built binary run as a user runs it, on
// podgroups the tests write themselves.
package podgroup

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
)

// maxRequeue is the manager's --max-requeue-num in these tests: small, so
// that the dropped-request path is reached quickly.
const maxRequeue = 3

// priorityClass exists so that pods may name it (the Priority admission
// plugin rejects unknown classes).
const priorityClass = "pg-test-high"

// revisionAnnotation is where the Deployment controller numbers the
// ReplicaSets of a Deployment's rollouts.
const revisionAnnotation = "deployment.kubernetes.io/revision"

var env struct {
	kube kubernetes.Interface
	vc   versioned.Interface
	// cli is the built binary; admin, alice and dead its kubeconfigs
	// (binary.CLI).
	cli                *binary.CLI
	admin, alice, dead string
}

// TestMain shares one cluster and one in-process manager running only the
// podgroup controller; each test works in its own namespace. The manager
// is stopped, and has returned, before the cluster is. The binary is built
// for the tests of the podgroup commands.
func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Level: controlplane.Controllers, Binary: true, Setup: setup})
}

func setup(e *cptest.Env) error {
	cfg := e.CP.AdminConfig()
	env.kube = kubernetes.NewForConfigOrDie(cfg)
	env.vc = versioned.NewForConfigOrDie(cfg)
	c, err := binary.NewCLI(e)
	if err != nil {
		return err
	}
	env.cli, env.admin, env.alice, env.dead = c, c.Admin, c.Alice, c.Dead
	if _, err := env.kube.SchedulingV1().PriorityClasses().Create(context.Background(),
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priorityClass}, Value: 1000}, metav1.CreateOptions{}); err != nil {
		return err
	}
	pg, err := framework.Configure("podgroup", "--scheduler-name=volcano", "--scheduler-name=volcano-two",
		"--inherit-owner-annotations=true", "--workers-podgroup=2")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Config{Kubeconfig: cfg,
			Controllers:   []framework.Controller{pg},
			MaxRequeueNum: maxRequeue,
			FeatureGates:  framework.NewFeatureGate(),
			// The cluster is stopped after the manager returns: every
			// worker must have finished by then.
			WaitForStop: true,
		})
	}()
	e.Cleanup(func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("manager: %w", err)
		}
		return nil
	})
	return nil
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespace creates a namespace for the test, deleted at its end, and waits
// for the default ServiceAccount that kube-controller-manager gives it: the
// ServiceAccount admission plugin refuses pods until it exists. (Workload
// controllers retry by themselves; a pod a test creates would fail.) The
// name is the test's with a random suffix, so that -count=2 does not meet
// the previous run's namespace while the namespace controller empties it.
func namespace(t *testing.T) string {
	t.Helper()
	base := "pg-" + strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(strings.TrimPrefix(t.Name(), "Test")), "-"), "-")
	if len(base) > 57 {
		base = strings.TrimRight(base[:57], "-")
	}
	ctx := context.Background()
	ns, err := env.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: base + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name := ns.Name
	t.Cleanup(func() { _ = env.kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, "the default ServiceAccount of namespace "+name, func(ctx context.Context) (bool, error) {
		_, err := env.kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	return name
}

// eventually polls until cond holds. The limit only turns a hang into a
// failure; nothing here measures speed. It is generous because the garbage
// collector notices a new resource type (our CRDs, installed after
// kube-controller-manager started) only at its periodic discovery resync.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: never happened (last error: %v)", what, last)
	}
}

func res(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// podSpec is a one-container spec for the given scheduler.
func podSpec(scheduler string, req, lim corev1.ResourceList) corev1.PodSpec {
	return corev1.PodSpec{
		SchedulerName: scheduler,
		Containers: []corev1.Container{{
			Name: "main", Image: "registry.example/app:1",
			Resources: corev1.ResourceRequirements{Requests: req, Limits: lim},
		}},
	}
}

type podOpt func(*corev1.Pod)

func withAnnotations(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}

// createPod creates a bare pod (no owner): only for what a user creates
// by hand. Workloads' pods come from their controllers.
func createPod(t *testing.T, ns, name string, spec corev1.PodSpec, opts ...podOpt) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	for _, o := range opts {
		o(p)
	}
	out, err := env.kube.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// template is a pod template with the app label and the given annotations.
func template(app string, annotations map[string]string, spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}, Annotations: annotations},
		Spec:       spec,
	}
}

// deployment is a Deployment of app=name; annotations are the Deployment's
// own (the Deployment controller copies them to its ReplicaSets).
func deployment(ns, name string, replicas int32, annotations map[string]string, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: tmpl,
		},
	}
}

func createDeployment(t *testing.T, d *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	out, err := env.kube.AppsV1().Deployments(d.Namespace).Create(context.Background(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// patch applies obj as a patch to a Deployment, StatefulSet, pod or
// PodGroup: a strategic merge patch, as kubectl patch sends, for the
// built-in kinds (containers merge by name), a JSON merge patch for the
// PodGroup custom resource.
func patch(t *testing.T, kind, ns, name string, obj any) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	ctx, opts, smp := context.Background(), metav1.PatchOptions{}, types.StrategicMergePatchType
	switch kind {
	case "Deployment":
		_, err = env.kube.AppsV1().Deployments(ns).Patch(ctx, name, smp, data, opts)
	case "StatefulSet":
		_, err = env.kube.AppsV1().StatefulSets(ns).Patch(ctx, name, smp, data, opts)
	case "Pod":
		_, err = env.kube.CoreV1().Pods(ns).Patch(ctx, name, smp, data, opts)
	case "PodGroup":
		_, err = env.vc.SchedulingV1beta1().PodGroups(ns).Patch(ctx, name, types.MergePatchType, data, opts)
	default:
		t.Fatalf("patch: unknown kind %s", kind)
	}
	if err != nil {
		t.Fatalf("patch %s %s/%s: %v", kind, ns, name, err)
	}
}

// annotationsPatch is a patch setting metadata.annotations.
func annotationsPatch(kv ...string) map[string]any {
	ann := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		ann[kv[i]] = kv[i+1]
	}
	return map[string]any{"metadata": map[string]any{"annotations": ann}}
}

// scale sets spec.replicas of a Deployment or StatefulSet.
func scale(t *testing.T, kind, ns, name string, replicas int32) {
	t.Helper()
	patch(t, kind, ns, name, map[string]any{"spec": map[string]any{"replicas": replicas}})
}

// replicaSet waits for the ReplicaSet the Deployment controller made for
// the given revision of the Deployment ("1" for the first template, "2"
// after one template change) and returns it once pred holds of it.
func replicaSet(t *testing.T, d *appsv1.Deployment, revision string, what string, pred func(*appsv1.ReplicaSet) bool) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	eventually(t, fmt.Sprintf("ReplicaSet of revision %s of Deployment %s: %s", revision, d.Name, what), func(ctx context.Context) (bool, error) {
		list, err := env.kube.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			r := &list.Items[i]
			if ref := metav1.GetControllerOf(r); ref != nil && ref.UID == d.UID && r.Annotations[revisionAnnotation] == revision {
				rs = r
				return pred == nil || pred(r), nil
			}
		}
		return false, nil
	})
	return rs
}

// replicasAre is a ReplicaSet predicate on spec.replicas.
func replicasAre(n int32) func(*appsv1.ReplicaSet) bool {
	return func(rs *appsv1.ReplicaSet) bool { return ptr.Deref(rs.Spec.Replicas, 1) == n }
}

// podsOf waits until exactly n live (not terminating) pods in ns are
// controlled by the owner with this UID and pred (nil: any) holds of each,
// and returns them sorted by name.
func podsOf(t *testing.T, ns string, owner types.UID, n int, pred func(*corev1.Pod) bool) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	eventually(t, fmt.Sprintf("%d pods controlled by %s", n, owner), func(ctx context.Context) (bool, error) {
		list, err := env.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods = pods[:0]
		for i := range list.Items {
			p := &list.Items[i]
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == owner && p.DeletionTimestamp == nil {
				if pred != nil && !pred(p) {
					return false, nil
				}
				pods = append(pods, p)
			}
		}
		return len(pods) == n, nil
	})
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// groupName is the group the controller gives the replicas of a workload
// (plugins/podgroup.GroupName: podgroup-<controller owner UID>) or a bare
// pod (podgroup-<pod UID>).
func groupName(uid types.UID) string { return "podgroup-" + string(uid) }

// groupOf waits until the pod is annotated and its group exists, checks
// that the annotation names the expected group, and returns the group.
func groupOf(t *testing.T, pod *corev1.Pod, want string) *v1beta1.PodGroup {
	t.Helper()
	var pg *v1beta1.PodGroup
	eventually(t, "pod "+pod.Name+" annotated and its group present", func(ctx context.Context) (bool, error) {
		p, err := env.kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.UID != pod.UID {
			t.Fatalf("pod %s was replaced (UID %s, want %s)", pod.Name, p.UID, pod.UID)
		}
		name := p.Annotations[keys.KubeGroupName]
		if name == "" {
			return false, nil
		}
		if name != want {
			t.Fatalf("pod %s annotated with group %q, want %q", pod.Name, name, want)
		}
		pg, err = env.vc.SchedulingV1beta1().PodGroups(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil, err
	})
	return pg
}

// allIn waits until every pod is annotated with the group and returns it.
func allIn(t *testing.T, pods []*corev1.Pod, want string) *v1beta1.PodGroup {
	t.Helper()
	var pg *v1beta1.PodGroup
	for _, p := range pods {
		pg = groupOf(t, p, want)
	}
	return pg
}

// getGroup reads a group that must exist.
func getGroup(t *testing.T, ns, name string) *v1beta1.PodGroup {
	t.Helper()
	pg, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

// groupUntil waits until the group exists and cond holds of it.
func groupUntil(t *testing.T, ns, name, what string, cond func(*v1beta1.PodGroup) bool) *v1beta1.PodGroup {
	t.Helper()
	var pg *v1beta1.PodGroup
	eventually(t, "podgroup "+name+": "+what, func(ctx context.Context) (bool, error) {
		var err error
		pg, err = env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && cond(pg), err
	})
	return pg
}

// minMemberFromOwner waits until the group has the minMember that its
// owner's min-member annotation gives, and returns it. A workload's pod may
// reach the controller's pod cache before its owner reaches the owner's
// cache (two watch streams): the pod then waits for its owner, whose own
// event groups it, and a group made first by the pod path is brought up to
// date by the owner's path. Either way the tests wait for the owner's
// min-member; the owner's other annotations come with the same read.
func minMemberFromOwner(t *testing.T, pg *v1beta1.PodGroup, n int32) *v1beta1.PodGroup {
	t.Helper()
	return groupUntil(t, pg.Namespace, pg.Name, fmt.Sprintf("minMember %d from its owner", n), func(pg *v1beta1.PodGroup) bool {
		return pg.Spec.MinMember == n
	})
}

// groupGone waits until the group no longer exists.
func groupGone(t *testing.T, ns, name, why string) {
	t.Helper()
	eventually(t, "podgroup "+name+" deleted ("+why+")", func(ctx context.Context) (bool, error) {
		_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// groupsAre waits until the PodGroups of the namespace are exactly these.
func groupsAre(t *testing.T, ns string, want ...string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	eventually(t, fmt.Sprintf("the podgroups of %s to be %v", ns, want), func(ctx context.Context) (bool, error) {
		list, err := env.vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got = got[:0]
		for _, pg := range list.Items {
			got = append(got, pg.Name)
		}
		slices.Sort(got)
		return slices.Equal(got, want), nil
	})
}

// ownedByController checks that the group's owner references are exactly
// the pod's: a controller reference to the workload the pod belongs to.
func ownedByController(t *testing.T, pg *v1beta1.PodGroup, apiVersion, kind, name string, uid types.UID) {
	t.Helper()
	if len(pg.OwnerReferences) != 1 {
		t.Fatalf("owner references of %s: %+v", pg.Name, pg.OwnerReferences)
	}
	ref := pg.OwnerReferences[0]
	if ref.APIVersion != apiVersion || ref.Kind != kind || ref.Name != name || ref.UID != uid ||
		!ptr.Deref(ref.Controller, false) || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("owner reference of %s: %+v, want controller %s %s %s/%s", pg.Name, ref, apiVersion, kind, name, uid)
	}
}

// settled waits until the controller has handled a sentinel pod created
// after the objects under test. The work queue is FIFO, so by then the
// earlier pods have been taken by a worker (with two workers one may still
// be in flight, which could only hide a failure, never invent one); it
// proves the controller is alive and caught up, so a missing group
// afterwards is a decision, not a delay.
func settled(t *testing.T, ns string) *corev1.Pod {
	t.Helper()
	s := createPod(t, ns, "sentinel", podSpec("volcano", nil, nil))
	groupOf(t, s, groupName(s.UID))
	return s
}

// equalResources compares by value and key set.
func equalResources(t *testing.T, got *corev1.ResourceList, want corev1.ResourceList) {
	t.Helper()
	if got == nil {
		t.Fatalf("minResources missing, want %v", want)
	}
	for k, w := range want {
		g, ok := (*got)[k]
		if !ok || g.Cmp(w) != 0 {
			t.Errorf("minResources[%s] = %s (present %v), want %s", k, g.String(), ok, w.String())
		}
	}
	for k, g := range *got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected minResources[%s] = %s", k, g.String())
		}
	}
}

// warningFor waits for a Warning event with the reason on the object.
func warningFor(t *testing.T, ns, name, reason string) *corev1.Event {
	t.Helper()
	var ev *corev1.Event
	eventually(t, "Warning "+reason+" on "+name, func(ctx context.Context) (bool, error) {
		list, err := env.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
		})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if e := &list.Items[i]; e.Type == corev1.EventTypeWarning && e.Reason == reason {
				ev = e
				return true, nil
			}
		}
		return false, nil
	})
	return ev
}

func notFound(t *testing.T, ns, name string) {
	t.Helper()
	_, err := env.vc.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("podgroup %s/%s: want NotFound, got %v", ns, name, err)
	}
}

// job is a batch Job whose pods never finish here (no node).
func job(ns, name string, parallelism, completions int32, annotations map[string]string, spec corev1.PodSpec) *batchv1.Job {
	spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism),
			Completions: ptr.To(completions),
			Template:    template(name, nil, spec),
		},
	}
}
