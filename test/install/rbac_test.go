package install

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	livepods "github.com/kubectl-vc/kubectl-vc/internal/testenv/pods"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// TestRBACServiceAccount runs every controller path of serve as the
// ServiceAccount of the embedded manifests and proves the ClusterRole and
// the Lease Role lack nothing: the serve process (queue, podgroup and
// NodeSet controllers, leader election on) gets no 403 at all.
//
// It has a cluster of its own at level Controllers: the real
// kube-controller-manager makes the Deployments' ReplicaSets and pods and
// the StatefulSet's pods and revisions, and gives namespaces their default
// ServiceAccount. No node runs, so pods stay Pending (the test plays kubelet
// for the NodeSet's pods, whose Ready condition decides which leave first).
// The NodeSet controller drains nodes of a real slurmctld with the host's
// Slurm client commands, which is why serve runs as a local process with a
// TokenRequest token for the ServiceAccount, and not in a pod.
func TestRBACServiceAccount(t *testing.T) {
	start := time.Now()
	c := cptest.StartLevel(t, controlplane.Controllers)
	admin := c.AdminConfig()
	kube, vc := kubernetes.NewForConfigOrDie(admin), versioned.NewForConfigOrDie(admin)
	// The NodeSet's pods are named rbac-<ordinal>; so are the Slurm nodes.
	// No slurmd answers for them, so within seconds slurmctld's pings flag
	// them NOT_RESPONDING, and salloc refuses such nodes: the two jobs that
	// make rbac-1 and rbac-2 busy for the scale-in are allocated now, and
	// keep their nodes (no SlurmdTimeout, so no node is set DOWN).
	cluster := slurmtest.StartT(t, "rbac-0", "rbac-1", "rbac-2")
	var jobs []string
	for _, node := range []string{"rbac-1", "rbac-2"} {
		job, err := cluster.Allocate(ctx, node, 30)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job)
	}
	path := serviceAccountKubeconfig(t, admin, kube)

	// Every namespace gets its default ServiceAccount before anything makes
	// pods in it: the ServiceAccount admission plugin refuses pods until
	// then, with a 403 that is not RBAC's, and a pod serve makes (the
	// NodeSet's) would count as such.
	// One namespace per path, so that each sees only its own groups.
	ns := map[string]string{}
	for _, n := range []string{"queue", "deploy", "sts", "slurm"} {
		ns[n] = testNamespace(t, kube, "rbac-"+n)
	}
	for _, q := range []string{keys.RootQueue, keys.DefaultQueue} {
		if _, err := vc.SchedulingV1beta1().Queues().Get(ctx, q, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("queue %s before serve started: %v (serve must create it: 'create' on queues)", q, err)
		}
	}

	// Without --profiling: pprof is served only behind the HTTPS checks
	// (issue 42), and this serve's metrics are plain HTTP, so
	// explainNodeSet shows no goroutine stacks.
	// The queue index controller keeps the indexes install makes: one is
	// enough for it to write them all (issue 55).
	if _, err := vc.AdmissionV1alpha1().QueueIndexes().Create(ctx, &admissionv1alpha1.QueueIndex{ObjectMeta: metav1.ObjectMeta{Name: admissionv1alpha1.QueueIndexStates}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// install stamped the indexes when it wrote them; a stamp from this
	// second on is serve's own write, as its ServiceAccount.
	serveFrom := time.Now().Truncate(time.Second).Add(time.Second)
	// The queue webhook too, as serve's pods run it.
	hook, err := cptest.NewWebhook(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := cptest.StartServe(t, binary, path, "--controllers=queue,podgroup,nodeset,queueindex",
		"--slurm-conf="+cluster.Conf, "--leader-elect", "--leader-elect-resource-namespace=volcano-system",
		"--webhook-bind-address="+hook.Addr, "--webhook-cert-dir="+hook.CertDir)
	eventually(t, "serve holds the Lease in volcano-system", func() (bool, error) {
		l, err := kube.CoordinationV1().Leases("volcano-system").Get(ctx, "kubectl-vc-serve", metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", err
	})
	t.Logf("cluster, Slurm and serve up after %v", time.Since(start).Round(time.Millisecond))

	t.Run("queues", func(t *testing.T) { rbacQueues(t, kube, vc, ns["queue"]) })
	t.Run("queue index", func(t *testing.T) {
		eventually(t, "serve writes each queue index and stamps it refreshed", func() (bool, error) {
			for _, name := range admissionv1alpha1.QueueIndexNames {
				idx, err := vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, name, metav1.GetOptions{})
				if err != nil || idx.Spec.RefreshedAt == nil || idx.Spec.RefreshedAt.Time.Before(serveFrom) {
					return false, err
				}
			}
			return true, nil
		})
	})
	t.Run("queue webhook", func(t *testing.T) { rbacQueueWebhook(t, hook) })
	t.Run("Deployment", func(t *testing.T) { rbacDeployment(t, kube, vc, ns["deploy"]) })
	t.Run("StatefulSet", func(t *testing.T) { rbacStatefulSet(t, kube, vc, ns["sts"]) })
	t.Run("NodeSet", func(t *testing.T) {
		t.Cleanup(func() {
			if t.Failed() {
				explainNodeSet(t, p, kube, ns["slurm"])
			}
		})
		rbacNodeSet(t, kube, vc, cluster, jobs, ns["slurm"])
	})

	total, found := p.Metric(t, "rest_client_requests_total")
	if !found || total == 0 {
		t.Fatalf("serve reports no rest_client_requests_total samples (found %v, sum %v): the 403 check below would prove nothing", found, total)
	}
	byCode, samples := requestsByCode(t, p)
	t.Logf("serve made %v API requests as the ServiceAccount (by code %v), %v writes", total, byCode, p.Writes(t))
	if byCode["401"] != 0 {
		t.Errorf("%v requests of serve were not authenticated: the ServiceAccount token was refused", byCode["401"])
	}
	if v, _ := p.Metric(t, "rest_client_requests_total", `code="403"`); v != 0 {
		// A controller that retries may log the error only at a verbosity
		// serve does not run at: the failing subtest names the path, the
		// samples the method.
		t.Errorf("%v requests of serve were forbidden:\n%s\n%s", v, strings.Join(samples, "\n"), forbiddenLines(t, p.Log))
	}
	// On SIGTERM the leader releases the Lease (an 'update' of the Role).
	if err := p.Terminate(t); err != nil {
		t.Errorf("serve did not exit cleanly on SIGTERM: %v", err)
	}
	if l, err := kube.CoordinationV1().Leases("volcano-system").Get(ctx, "kubectl-vc-serve", metav1.GetOptions{}); err != nil ||
		ptr.Deref(l.Spec.HolderIdentity, "") != "" {
		t.Errorf("Lease not released on SIGTERM: %v %+v", err, l)
	}
	if lines := forbiddenLines(t, p.Log); lines != "" {
		t.Errorf("serve's log mentions forbidden requests:\n%s", lines)
	}
	t.Run("queue controller alone", func(t *testing.T) { rbacQueueAlone(t, path, vc, ns["queue"]) })
	t.Logf("all paths driven in %v", time.Since(start).Round(time.Millisecond))
}

// rbacQueueWebhook: serve's queue webhook answers a review of a queue whose
// parent its cache does not hold, which it then reads from the API server
// (a get: the 403 check of the test holds it to serve's RBAC).
func rbacQueueWebhook(t *testing.T, hook *cptest.Webhook) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(hook.CA) {
		t.Fatal("the webhook's CA does not parse")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"rbac-1",` +
		`"resource":{"group":"scheduling.volcano.sh","version":"v1beta1","resource":"queues"},"operation":"CREATE","name":"rbac-orphan",` +
		`"object":{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"rbac-orphan"},"spec":{"weight":1,"parent":"rbac-no-such-parent","capability":{"cpu":"1"}}}}}`
	var body []byte
	eventually(t, "serve's queue webhook answers", func() (bool, error) {
		resp, err := client.Post(hook.URL, "application/json", strings.NewReader(review))
		if err != nil {
			return false, nil // not listening yet
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK, err
	})
	if !strings.Contains(string(body), `"uid":"rbac-1"`) || !strings.Contains(string(body), `"allowed":true`) {
		t.Fatalf("a queue under a parent that exists nowhere: %s", body)
	}
}

// rbacQueueAlone: the queue controller without the podgroup controller
// counts podgroups from Table rows read namespace by namespace (list
// namespaces, then Tables of podgroups, then a Table watch): as the
// ServiceAccount, a podgroup created while no serve runs is counted, with
// no request refused.
func rbacQueueAlone(t *testing.T, kubeconfig string, vc versioned.Interface, ns string) {
	if _, err := vc.SchedulingV1beta1().PodGroups(ns).Create(ctx, &v1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "counted-alone"},
		Spec:       v1beta1.PodGroupSpec{MinMember: 1, Queue: "rbac-child"},
		Status:     v1beta1.PodGroupStatus{Phase: v1beta1.PodGroupRunning},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := cptest.StartServe(t, binary, kubeconfig, "--controllers=queue")
	eventually(t, "the new podgroup counted in rbac-child", func() (bool, error) {
		s := queues.Get(t, vc, "rbac-child").Status
		return s.Running == 1 && s.Pending == 1, nil
	})
	if log, err := os.ReadFile(p.Log); err != nil || !strings.Contains(string(log), `from="Tables per namespace"`) {
		t.Errorf("the queue controller alone did not read Tables per namespace (%v):\n%s", err, p.LastLog(20))
	}
	if v, _ := p.Metric(t, "rest_client_requests_total", `code="403"`); v != 0 {
		_, samples := requestsByCode(t, p)
		t.Errorf("%v requests of the queue controller alone were forbidden:\n%s\n%s", v, strings.Join(samples, "\n"), forbiddenLines(t, p.Log))
	}
	if lines := forbiddenLines(t, p.Log); lines != "" {
		t.Errorf("serve's log mentions forbidden requests:\n%s", lines)
	}
}

// rbacQueues: start-up creates root and default; a queue without a parent
// gets root (patch); a bare volcano pod gets its group (podgroup create,
// pod patch), counted in its queue (status apply); open/close Commands
// (applied, then deleted) on a child; closing the parent closes and marks
// the child, reopening it reopens the child and removes the mark; state
// changes are recorded as events.
func rbacQueues(t *testing.T, kube kubernetes.Interface, vc versioned.Interface, ns string) {
	queues.WaitState(t, vc, keys.RootQueue, v1beta1.QueueStateOpen)
	if d := queues.WaitState(t, vc, keys.DefaultQueue, v1beta1.QueueStateOpen); d.Spec.Parent != keys.RootQueue {
		t.Errorf("default's parent %q", d.Spec.Parent)
	}
	parent := queues.Create(t, vc, "rbac-parent", "")
	child := queues.Create(t, vc, "rbac-child", parent.Name)
	eventually(t, "rbac-parent defaulted under root", func() (bool, error) {
		return queues.Get(t, vc, parent.Name).Spec.Parent == keys.RootQueue, nil
	})

	pod, err := kube.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bare", Annotations: map[string]string{keys.QueueName: child.Name}},
		Spec:       volcanoPodSpec("100m"),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pg := groupOfPod(t, kube, vc, ns, pod.Name, groupName(pod.UID))
	if pg.Spec.Queue != child.Name || pg.Spec.MinMember != 1 {
		t.Errorf("bare pod's group: %+v", pg.Spec)
	}
	eventually(t, "the bare pod's group counted in rbac-child", func() (bool, error) {
		s := queues.Get(t, vc, child.Name).Status
		return s.State == v1beta1.QueueStateOpen && s.Pending == 1, nil
	})

	queues.CommandGone(t, vc, queues.Command(t, vc, child, busv1alpha1.CloseQueueAction))
	queues.WaitState(t, vc, child.Name, v1beta1.QueueStateClosing) // its group keeps it Closing
	queues.CommandGone(t, vc, queues.Command(t, vc, child, busv1alpha1.OpenQueueAction))
	queues.WaitState(t, vc, child.Name, v1beta1.QueueStateOpen)

	queues.CommandGone(t, vc, queues.Command(t, vc, parent, busv1alpha1.CloseQueueAction))
	queues.WaitState(t, vc, parent.Name, v1beta1.QueueStateClosed)
	eventually(t, "rbac-child closed and marked by its parent", func() (bool, error) {
		q := queues.Get(t, vc, child.Name)
		return q.Status.State == v1beta1.QueueStateClosing && q.Annotations[keys.ClosedByParent] == "true", nil
	})
	queues.CommandGone(t, vc, queues.Command(t, vc, parent, busv1alpha1.OpenQueueAction))
	queues.WaitState(t, vc, parent.Name, v1beta1.QueueStateOpen)
	eventually(t, "rbac-child reopened with its parent, mark removed", func() (bool, error) {
		q := queues.Get(t, vc, child.Name)
		_, marked := q.Annotations[keys.ClosedByParent]
		return q.Status.State == v1beta1.QueueStateOpen && !marked, nil
	})
	eventually(t, "StateChanged events of rbac-child", func() (bool, error) {
		evs, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + child.Name})
		if err != nil {
			return false, err
		}
		// Repeated events are aggregated (a patch of the count).
		var n int32
		for _, e := range evs.Items {
			if e.Reason == "StateChanged" {
				n += max(e.Count, 1)
			}
		}
		return n >= 4, nil
	})
}

// rbacDeployment: the ReplicaSet's pods share a group; a template change
// makes a second ReplicaSet whose pod gets a group of its own; an annotation
// of the Deployment, copied to its ReplicaSet, updates the group (merge
// patch); scaling to 0 deletes both groups.
func rbacDeployment(t *testing.T, kube kubernetes.Interface, vc versioned.Interface, ns string) {
	d, err := kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: volcanoPodSpec("100m")},
			// Pending pods never become available: the rollout below stops
			// at one pod of the new ReplicaSet, next to the old two.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs1 := replicaSetOf(t, kube, d, "1", nil)
	g1 := groupName(rs1.UID)
	for _, pod := range podsOf(t, kube, ns, rs1.UID, 2) {
		groupOfPod(t, kube, vc, ns, pod, g1)
	}

	strategicPatch(t, kube.AppsV1().RESTClient(), ns, "deployments", "web", map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "resources": map[string]any{"requests": map[string]any{"cpu": "200m"}}}}},
	}}})
	rs2 := replicaSetOf(t, kube, d, "2", func(rs *appsv1.ReplicaSet) bool { return ptr.Deref(rs.Spec.Replicas, 0) == 1 })
	g2 := groupName(rs2.UID)
	groupOfPod(t, kube, vc, ns, podsOf(t, kube, ns, rs2.UID, 1)[0], g2)
	groupsAre(t, vc, ns, g1, g2)

	strategicPatch(t, kube.AppsV1().RESTClient(), ns, "deployments", "web",
		map[string]any{"metadata": map[string]any{"annotations": map[string]any{keys.GroupMinMember: "2"}}})
	eventually(t, "group of the new ReplicaSet updated from the Deployment's annotation", func() (bool, error) {
		pg, err := vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, g2, metav1.GetOptions{})
		return err == nil && pg.Spec.MinMember == 2, err
	})

	strategicPatch(t, kube.AppsV1().RESTClient(), ns, "deployments", "web", map[string]any{"spec": map[string]any{"replicas": 0}})
	groupsAre(t, vc, ns) // both ReplicaSets at 0: both groups deleted
}

// rbacStatefulSet: the StatefulSet's pods share a group; after a template
// change the pod of the update revision joins it; an annotation of the
// StatefulSet updates the group; scaling to 0 deletes it.
func rbacStatefulSet(t *testing.T, kube kubernetes.Interface, vc versioned.Interface, ns string) {
	sts, err := kube.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](2),
			ServiceName:         "db",
			PodManagementPolicy: appsv1.ParallelPodManagement, // OrderedReady would wait for db-0 to be Ready
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db"}}, Spec: volcanoPodSpec("100m")},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := groupName(sts.UID)
	for _, pod := range podsOf(t, kube, ns, sts.UID, 2) {
		groupOfPod(t, kube, vc, ns, pod, g)
	}
	first, err := vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, g, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rev1 := updateRevision(t, kube, ns, "db", "")

	strategicPatch(t, kube.AppsV1().RESTClient(), ns, "statefulsets", "db", map[string]any{"spec": map[string]any{"template": map[string]any{
		"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "resources": map[string]any{"requests": map[string]any{"cpu": "300m"}}}}},
	}}})
	rev2 := updateRevision(t, kube, ns, "db", rev1)
	eventually(t, "a pod of the update revision in the StatefulSet's group", func() (bool, error) {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: appsv1.ControllerRevisionHashLabelKey + "=" + rev2})
		if err != nil {
			return false, err
		}
		for _, pod := range list.Items {
			if pod.DeletionTimestamp == nil && pod.Annotations[keys.KubeGroupName] == g {
				return true, nil
			}
		}
		return false, nil
	})
	strategicPatch(t, kube.AppsV1().RESTClient(), ns, "statefulsets", "db",
		map[string]any{"metadata": map[string]any{"annotations": map[string]any{keys.RevocableZone: "rz1"}}})
	eventually(t, "the group updated from the StatefulSet's annotation", func() (bool, error) {
		pg, err := vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, g, metav1.GetOptions{})
		if err == nil && pg.UID != first.UID {
			t.Fatalf("group %s re-created on the update", g)
		}
		return err == nil && pg.Annotations[keys.RevocableZone] == "rz1", err
	})

	strategicPatch(t, kube.AppsV1().RESTClient(), ns, "statefulsets", "db", map[string]any{"spec": map[string]any{"replicas": 0}})
	groupsAre(t, vc, ns)
}

// rbacNodeSet: a NodeSet gets its pods, their claims (one per pod from the
// claim template), headless Service, PDB, revision and status (server-side
// apply); an orphaned revision is adopted back (patch);
// scale out; scale in from 3 to 1, while rbac-1 and rbac-2 run jobs,
// deletes the idle pod and drains the busy one in Slurm first (pod
// cordoned, node DRAINING), deleting it once its job ends; a template
// change replaces the last pod and prunes the old revision (delete). Its
// ssh ConfigMap is made (create), then rewritten (apply) with the template
// change.
func rbacNodeSet(t *testing.T, kube kubernetes.Interface, vc versioned.Interface, cluster *slurmtest.Cluster, jobs []string, ns string) {
	nodeSets := vc.SlinkyV1beta1().NodeSets(ns)
	created, err := nodeSets.Create(ctx, &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac"},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To[int32](2),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
			Template: slinkyv1beta1.PodTemplate{
				PodMetadata: slinkyv1beta1.PodMetadata{Labels: map[string]string{"team": "hpc"}},
				PodSpec:     corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0)},
			},
			// Each pod gets a claim data-<pod>, which serve creates as
			// the ServiceAccount (create persistentvolumeclaims).
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
			UpdateStrategy: slinkyv1beta1.NodeSetUpdateStrategy{
				Type:          slinkyv1beta1.RollingUpdateNodeSetStrategyType,
				RollingUpdate: &slinkyv1beta1.RollingUpdateNodeSetStrategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			},
			// The claim of a pod a scale-in removes gets the pod as owner
			// (get and patch persistentvolumeclaims), so that it goes
			// with the pod.
			PersistentVolumeClaimRetentionPolicy: &slinkyv1beta1.NodeSetPersistentVolumeClaimRetentionPolicy{
				WhenScaled: slinkyv1beta1.DeletePersistentVolumeClaimRetentionPolicyType},
			// The ConfigMap rbac-ssh-config: watched, created, then
			// applied when extraSshdConfig changes (below).
			SSH: &slinkyv1beta1.NodeSetSSH{Enabled: true, ExtraSshdConfig: "LoginGraceTime 600",
				SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}, Key: "sssd.conf"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patchNodeSet := func(patch string) {
		t.Helper()
		if _, err := nodeSets.Patch(ctx, "rbac", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	podsAre := func(what, want string) {
		t.Helper()
		eventually(t, what+": pods "+want, func() (bool, error) { return livePodNames(t, kube, ns) == want, nil })
	}

	claimsAre := func(want string) {
		t.Helper()
		eventually(t, "claims "+want, func() (bool, error) {
			list, err := kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			var names []string
			for _, c := range list.Items {
				names = append(names, c.Name)
			}
			sort.Strings(names)
			return strings.Join(names, ",") == want, nil
		})
	}

	podsAre("created", "rbac-0,rbac-1")
	claimsAre("data-rbac-0,data-rbac-1")
	eventually(t, "status applied", func() (bool, error) {
		st, err := nodeSets.Get(ctx, "rbac", metav1.GetOptions{})
		return err == nil && st.Status.NodeSetHash != "" && st.Status.Replicas == 2, err
	})
	svc, err := kube.CoreV1().Services(ns).Get(ctx, "rbac", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != corev1.ClusterIPNone || !metav1.IsControlledBy(svc, created) {
		t.Fatalf("headless Service: %v %+v", err, svc)
	}
	pdb, err := kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "rbac", metav1.GetOptions{})
	if err != nil || !metav1.IsControlledBy(pdb, created) {
		t.Fatalf("PodDisruptionBudget: %v %+v", err, pdb)
	}
	sshConfig := func(extra string) {
		t.Helper()
		eventually(t, "ConfigMap rbac-ssh-config with "+extra, func() (bool, error) {
			cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, "rbac-ssh-config", metav1.GetOptions{})
			return err == nil && metav1.IsControlledBy(cm, created) && strings.HasSuffix(cm.Data["sshd_config"], "\n"+extra+"\n"), err
		})
	}
	sshConfig("LoginGraceTime 600")
	revs := revisionsOf(t, kube, ns)
	if len(revs) != 1 {
		t.Fatalf("%d revisions, want 1", len(revs))
	}

	// An orphaned revision is adopted back (patch), not duplicated.
	orphan := revs[0].Name
	patch := `{"metadata":{"ownerReferences":null,"labels":{"controller.kubernetes.io/hash":null}}}`
	if _, err := kube.AppsV1().ControllerRevisions(ns).Patch(ctx, orphan, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "orphaned revision adopted", func() (bool, error) {
		r := revisionsOf(t, kube, ns)
		return len(r) == 1 && r[0].Name == orphan && metav1.IsControlledBy(&r[0], created) && r[0].Labels["controller.kubernetes.io/hash"] != "", nil
	})

	patchNodeSet(`{"spec":{"replicas":3}}`)
	podsAre("scaled out", "rbac-0,rbac-1,rbac-2")
	claimsAre("data-rbac-0,data-rbac-1,data-rbac-2")
	// Unready pods would leave first; ready ones leave idle first, then by
	// highest ordinal.
	markAllReady(t, kube, ns)
	eventually(t, "status counts ready pods", func() (bool, error) {
		st, err := nodeSets.Get(ctx, "rbac", metav1.GetOptions{})
		return err == nil && st.Status.ReadyReplicas == 3, err
	})

	patchNodeSet(`{"spec":{"replicas":1}}`)
	eventually(t, "idle rbac-0 deleted, busy rbac-2 cordoned with its job's deadline", func() (bool, error) {
		pods := livepods.Live(t, kube, ns)
		b := pods["rbac-2"]
		return livepods.Names(pods) == "rbac-1,rbac-2" && b.Annotations[slinkyv1beta1.AnnotationPodCordon] == "true" &&
			b.Annotations[slinkyv1beta1.AnnotationPodDeadline] != "", nil
	})
	if st := slurmState(t, cluster, "rbac-2"); st != "DRAINING (kubectl-vc: scale-in)" {
		t.Fatalf("rbac-2 in Slurm: %s", st)
	}
	if st := slurmState(t, cluster, "rbac-1"); st != "ALLOCATED" {
		t.Fatalf("rbac-1 in Slurm: %s (must be left alone)", st)
	}
	if err := cluster.EndJob(ctx, jobs[1], "rbac-2"); err != nil {
		t.Fatal(err)
	}
	podsAre("drained pod deleted", "rbac-1")
	for _, claim := range []string{"data-rbac-0", "data-rbac-2"} {
		eventually(t, claim+" owned by its pod, or gone with it", func() (bool, error) {
			c, err := kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			for _, r := range c.OwnerReferences {
				if r.Kind == "Pod" && "data-"+r.Name == claim {
					return true, nil
				}
			}
			return false, nil
		})
	}
	if err := cluster.EndJob(ctx, jobs[0], "rbac-1"); err != nil {
		t.Fatal(err)
	}

	old := revisionsOf(t, kube, ns)[0].Name
	patchNodeSet(`{"spec":{"template":{"metadata":{"labels":{"team":"hpc2"}}},"ssh":{"extraSshdConfig":"LoginGraceTime 30"}}}`)
	sshConfig("LoginGraceTime 30")
	// rbac-1 is cordoned, drained and deleted; its replacement takes the
	// lowest free ordinal, rbac-0.
	eventually(t, "the pod replaced on the new revision, the old revision pruned", func() (bool, error) {
		markAllReady(t, kube, ns)
		pods, r := livepods.Live(t, kube, ns), revisionsOf(t, kube, ns)
		var revs []string
		for _, x := range r {
			revs = append(revs, x.Name)
		}
		for _, p := range pods {
			if len(pods) == 1 && p.Labels["team"] == "hpc2" && len(r) == 1 && r[0].Name != old &&
				slinkyv1beta1.PodRevisionHash("rbac", p.Labels) == slinkyv1beta1.RevisionHash("rbac", r[0].Name, r[0].Labels) {
				return true, nil
			}
		}
		return false, fmt.Errorf("pods %s, revisions %v (old %s)", livepods.Names(pods), revs, old)
	})

	// Protection turned off: the controller deletes its budget.
	patchNodeSet(`{"spec":{"workloadDisruptionProtection":false}}`)
	eventually(t, "the PodDisruptionBudget deleted with protection off", func() (bool, error) {
		_, err := kube.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "rbac", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	// A ScheduledUpdate window an hour ahead: the controller adds the
	// reservation finalizer (patch on nodesets) before it makes the Slurm
	// reservation; back to RollingUpdate, it deletes the reservation and
	// removes the finalizer.
	hasFinalizer := func() bool {
		cur, err := nodeSets.Get(ctx, "rbac", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(cur.Finalizers, slinkyv1beta1.FinalizerNodeSetReservation)
	}
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	patchNodeSet(`{"spec":{"updateStrategy":{"type":"ScheduledUpdate","scheduledUpdate":{"startTime":"` + start + `","duration":"10m"}}}}`)
	eventually(t, "the reservation finalizer added", func() (bool, error) { return hasFinalizer(), nil })
	patchNodeSet(`{"spec":{"updateStrategy":{"type":"RollingUpdate","scheduledUpdate":null}}}`)
	eventually(t, "the reservation finalizer removed", func() (bool, error) { return !hasFinalizer(), nil })
}

// serviceAccountKubeconfig applies the serve manifests but the Deployment
// (namespace, ServiceAccount, ClusterRole and binding, Lease Role and
// binding) as admin, and writes a kubeconfig with a TokenRequest token of
// volcano-system/kubectl-vc-serve.
func serviceAccountKubeconfig(t *testing.T, admin *rest.Config, kube kubernetes.Interface) string {
	t.Helper()
	objs, err := manifests.Objects(manifests.Serve)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(admin)
	resources := map[string]string{"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles",
		"ClusterRoleBinding": "clusterrolebindings", "Role": "roles", "RoleBinding": "rolebindings"}
	for _, o := range objs {
		if o.GetKind() == "Deployment" || o.GetKind() == "Service" {
			continue // serve runs here as a local process (it needs the host's Slurm client)
		}
		res, ok := resources[o.GetKind()]
		if !ok {
			t.Fatalf("unexpected kind %s in the serve manifests", o.GetKind())
		}
		gv, err := schema.ParseGroupVersion(o.GetAPIVersion())
		if err != nil {
			t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(gv.WithResource(res))
		if ns := o.GetNamespace(); ns != "" {
			ri = dyn.Resource(gv.WithResource(res)).Namespace(ns)
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
			t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		checkNoWildcards(t, o)
	}
	return tokenKubeconfig(t, admin, kube)
}

// tokenKubeconfig is a kubeconfig of a TokenRequest token of serve's
// ServiceAccount in volcano-system.
func tokenKubeconfig(t *testing.T, admin *rest.Config, kube kubernetes.Interface) string {
	t.Helper()
	tok, err := kube.CoreV1().ServiceAccounts("volcano-system").CreateToken(ctx, "kubectl-vc-serve",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: admin.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa"}
	cfg.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func checkNoWildcards(t *testing.T, o *unstructured.Unstructured) {
	rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
	for _, r := range rules {
		m := r.(map[string]any)
		for _, k := range []string{"apiGroups", "resources", "verbs", "nonResourceURLs"} {
			vals, _, _ := unstructured.NestedStringSlice(m, k)
			for _, v := range vals {
				if v == "*" {
					t.Errorf("%s %s has a wildcard in %s", o.GetKind(), o.GetName(), k)
				}
			}
		}
	}
}

var codeLabel = regexp.MustCompile(`code="([^"]*)"`)

// requestsByCode sums serve's rest_client_requests_total by status code,
// and returns the samples of 403s (they name the method).
func requestsByCode(t *testing.T, p *cptest.Serve) (byCode map[string]float64, samples403 []string) {
	t.Helper()
	resp, err := http.Get("http://" + p.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	byCode = map[string]float64{}
	for _, l := range strings.Split(string(b), "\n") {
		m := codeLabel.FindStringSubmatch(l)
		if !strings.HasPrefix(l, "rest_client_requests_total{") || m == nil {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", l)
		}
		byCode[m[1]] += v
		if m[1] == "403" {
			samples403 = append(samples403, l)
		}
	}
	return byCode, samples403
}

// A 403 of the API server reads "... is forbidden: User ... cannot ..." in
// client-go's errors.
var forbiddenRE = regexp.MustCompile(`(?i)forbidden`)

// forbiddenLines are the lines of serve's log that speak of a refusal.
func forbiddenLines(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if forbiddenRE.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func testNamespace(t *testing.T, kube kubernetes.Interface, name string) string {
	t.Helper()
	_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	waitDefaultServiceAccount(t, kube, name)
	return name
}

func waitDefaultServiceAccount(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	eventually(t, "the default ServiceAccount of namespace "+ns, func() (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

func volcanoPodSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{
		Name: "main", Image: "registry.example/app:1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
	}}}
}

// groupName is the podgroup controller's group of a workload (its
// controller's UID) or a bare pod (its own).
func groupName(uid types.UID) string { return "podgroup-" + string(uid) }

// groupOfPod waits until the pod is annotated with the group want and the
// group exists, and returns it.
func groupOfPod(t *testing.T, kube kubernetes.Interface, vc versioned.Interface, ns, pod, want string) *v1beta1.PodGroup {
	t.Helper()
	var pg *v1beta1.PodGroup
	eventually(t, "pod "+pod+" in group "+want, func() (bool, error) {
		p, err := kube.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil || p.Annotations[keys.KubeGroupName] != want {
			return false, err
		}
		pg, err = vc.SchedulingV1beta1().PodGroups(ns).Get(ctx, want, metav1.GetOptions{})
		return err == nil, err
	})
	return pg
}

// groupsAre waits until the namespace's groups are exactly want.
func groupsAre(t *testing.T, vc versioned.Interface, ns string, want ...string) {
	t.Helper()
	sort.Strings(want)
	eventually(t, fmt.Sprintf("groups of %s are %v", ns, want), func() (bool, error) {
		list, err := vc.SchedulingV1beta1().PodGroups(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var got []string
		for _, pg := range list.Items {
			got = append(got, pg.Name)
		}
		sort.Strings(got)
		return strings.Join(got, ",") == strings.Join(want, ","), nil
	})
}

// replicaSetOf waits for the Deployment's ReplicaSet of a revision ("1",
// "2", ...) for which pred (nil: any) holds.
func replicaSetOf(t *testing.T, kube kubernetes.Interface, d *appsv1.Deployment, revision string, pred func(*appsv1.ReplicaSet) bool) *appsv1.ReplicaSet {
	t.Helper()
	var rs *appsv1.ReplicaSet
	eventually(t, "ReplicaSet of revision "+revision+" of "+d.Name, func() (bool, error) {
		list, err := kube.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			r := &list.Items[i]
			if metav1.IsControlledBy(r, d) && r.Annotations["deployment.kubernetes.io/revision"] == revision {
				rs = r
				return pred == nil || pred(r), nil
			}
		}
		return false, nil
	})
	return rs
}

// podsOf waits until n live pods are controlled by owner and returns their names.
func podsOf(t *testing.T, kube kubernetes.Interface, ns string, owner types.UID, n int) []string {
	t.Helper()
	var names []string
	eventually(t, fmt.Sprintf("%d pods of %s", n, owner), func() (bool, error) {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		names = names[:0]
		for _, p := range list.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == owner && p.DeletionTimestamp == nil {
				names = append(names, p.Name)
			}
		}
		return len(names) == n, nil
	})
	return names
}

// updateRevision waits until the StatefulSet's status.updateRevision is set
// and differs from not.
func updateRevision(t *testing.T, kube kubernetes.Interface, ns, name, not string) string {
	t.Helper()
	var rev string
	eventually(t, "status.updateRevision of StatefulSet "+name, func() (bool, error) {
		sts, err := kube.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		rev = sts.Status.UpdateRevision
		return rev != "" && rev != not, nil
	})
	return rev
}

// strategicPatch sends obj as a strategic merge patch, as kubectl patch does.
func strategicPatch(t *testing.T, client rest.Interface, ns, resource, name string, obj any) {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Patch(types.StrategicMergePatchType).Namespace(ns).Resource(resource).Name(name).Body(data).Do(ctx).Error(); err != nil {
		t.Fatalf("patch %s %s/%s: %v", resource, ns, name, err)
	}
}

// livePods are the namespace's pods not being deleted, by name.
func livePodNames(t *testing.T, kube kubernetes.Interface, ns string) string {
	return livepods.Names(livepods.Live(t, kube, ns))
}

// markAllReady plays kubelet for every pod not yet Running: Running and
// Ready. A strategic merge patch of the status merges conditions by type,
// so it neither conflicts with nor erases the scheduler's PodScheduled.
func markAllReady(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339))
	for name, p := range livepods.Live(t, kube, ns) {
		if p.Status.Phase == corev1.PodRunning {
			continue
		}
		_, err := kube.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// explainNodeSet logs, for a NodeSet step that failed, what the test cannot
// see from outside: the revisions as the API server has them, whether the
// NodeSet controller's syncs complete or one is held (its work queue), and
// the stacks of its goroutines.
func explainNodeSet(t *testing.T, p *cptest.Serve, kube kubernetes.Interface, ns string) {
	t.Helper()
	for _, r := range revisionsOf(t, kube, ns) {
		t.Logf("revision %s: number %d, controller %v, labels %v", r.Name, r.Revision, metav1.GetControllerOf(&r), r.Labels)
	}
	for _, m := range []string{"workqueue_depth", "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds", "workqueue_adds_total", "workqueue_retries_total"} {
		v, _ := p.Metric(t, m, `name="nodeset"`)
		t.Logf("%s{name=\"nodeset\"} %v", m, v)
	}
	for _, m := range []string{"volcano_nodeset_controller_syncs_total", "volcano_nodeset_slurm_refresh_failures_total"} {
		v, _ := p.Metric(t, m)
		t.Logf("%s %v", m, v)
	}
	stacks, err := p.Stacks("plugins/nodeset")
	if err != nil {
		t.Logf("no goroutine stacks: %v", err)
		return
	}
	t.Logf("serve's goroutines in the NodeSet controller:\n%s", stacks)
}

// revisionsOf are the NodeSet rbac's ControllerRevisions, by name.
func revisionsOf(t *testing.T, kube kubernetes.Interface, ns string) []appsv1.ControllerRevision {
	t.Helper()
	list, err := kube.AppsV1().ControllerRevisions(ns).List(ctx, metav1.ListOptions{LabelSelector: slinkyv1beta1.LabelAppInstance + "=rbac"})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

func slurmState(t *testing.T, cluster *slurmtest.Cluster, node string) string {
	t.Helper()
	st, err := cluster.Client().State(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	return st.String()
}
