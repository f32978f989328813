// TestServeInCluster proves serve as users run it: built into the project's
// container image, loaded into the local node's containerd, deployed by
// 'kubectl vc install --serve --image', running as pods with the
// ServiceAccount token kubelet mounts, next to the real
// kube-controller-manager.

package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

const (
	serveNS   = "volcano-system"
	serveName = "kubectl-vc-serve"
	// image is the tag this test builds and loads; install must deploy
	// exactly it (never :latest).
	image = "ghcr.io/kubectl-vc/kubectl-vc:incluster-test"
)

type env struct {
	t          *testing.T
	ctx        context.Context
	cp         *controlplane.ControlPlane
	kube       kubernetes.Interface
	vc         versioned.Interface
	binary     string
	kubeconfig string
}

func (e *env) kubectlVC(args ...string) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (e *env) poll(what string, timeout time.Duration, cond func() (bool, error)) {
	e.t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(e.ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %s: %v (last error: %v)\n%s", what, err, last, e.servePodsState())
	}
}

// servePodsState describes the serve pods and their last log lines, for
// failure messages.
func (e *env) servePodsState() string {
	pods, err := e.kube.CoreV1().Pods(serveNS).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: phase %s, node %q\n", p.Name, p.Status.Phase, p.Spec.NodeName)
		for _, cs := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "  container %s ready=%v restarts=%d state=%+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
		}
		logs, err := e.kube.CoreV1().Pods(serveNS).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](15)}).DoRaw(e.ctx)
		if err == nil {
			fmt.Fprintf(&b, "  logs:\n%s\n", logs)
		}
	}
	return b.String()
}

// leader is the pod named by the serve Lease, once one holds it.
func (e *env) leader() (string, error) {
	leases, err := e.kube.CoordinationV1().Leases(serveNS).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, l := range leases.Items {
		if holder := holderPod(&l); holder != "" {
			return holder, nil
		}
	}
	return "", nil
}

// holderPod is the pod name in a Lease's holder identity (leader election
// writes "<hostname>_<uuid>"; the hostname of a pod is its name).
func holderPod(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return ""
	}
	id := *l.Spec.HolderIdentity
	if i := strings.IndexByte(id, '_'); i > 0 {
		id = id[:i]
	}
	return id
}

// TestServeInCluster deploys serve from the image and checks, in order,
// that it runs as users run it, does its work, survives the loss of its
// leader, drains a NodeSet's Slurm node over REST before a scale-in removes
// the pod (incluster_nodeset_test.go), and never meets a 403.
func TestServeInCluster(t *testing.T) {
	cptest.RequireNode(t)
	cp := cptest.StartLevel(t, controlplane.Node)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	dir := t.TempDir()
	e := &env{t: t, ctx: ctx, cp: cp,
		kube: kubernetes.NewForConfigOrDie(cp.AdminConfig()), vc: versioned.NewForConfigOrDie(cp.AdminConfig()),
		kubeconfig: filepath.Join(dir, "kubeconfig")}
	if err := cp.WriteKubeconfig(e.kubeconfig, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.binary, err = cptest.BuildBinary(dir); err != nil {
		t.Fatal(err)
	}

	// The image, as 'make image' builds it, loaded as a user loads it.
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(dir, "image.tar")
	mk := exec.CommandContext(ctx, "make", "-C", root, "image", "IMAGE="+image, "IMAGE_TAR="+tarball)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	if err := cp.ImportImage(ctx, tarball); err != nil {
		t.Fatal(err)
	}

	// Slinky's operator CRDs, before serve starts: its NodeSet controller
	// then watches Controllers and RestApis from the start (installed later,
	// they would be noticed only at its next discovery poll, up to 30 s).
	if err := cptest.InstallSlinkyOperatorCRDs(ctx, cp); err != nil {
		t.Fatal(err)
	}
	// Slinky's namespace, as its chart makes it before serve is told of
	// it: the one step of a Slinky installation (docs/install.md).
	if _, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: slurmNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := e.kubectlVC("install", "--serve", "--image", image, "--slurm-namespaces="+slurmNS); err != nil {
		t.Fatalf("install --serve: %v\n%s", err, out)
	}
	d, err := e.kube.AppsV1().Deployments(serveNS).Get(ctx, serveName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Fatalf("install deployed image %q, want %q", got, image)
	}

	t.Run("two replicas run on the node, ready, one leads", func(t *testing.T) {
		e.t = t
		e.waitServeReady(2)
	})
	t.Run("the pods run in a namespace that enforces the restricted Pod Security Standard", func(t *testing.T) {
		e.t = t
		e.restrictedNamespace()
	})
	var tokens map[string]string
	t.Run("metrics over HTTPS: no token 401, no grant 403, the reader role 200", func(t *testing.T) {
		e.t = t
		tokens = scrapers(t, e.kube, "default")
		e.metricsAccess(tokens)
	})
	t.Run("doctor finds the metrics readable by a reader", func(t *testing.T) {
		e.t = t
		out, _ := e.kubectlVC("doctor", "-o", "json")
		var r doctor.Report
		if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		found := false
		for _, f := range r.Checks {
			if f.Check != "metrics" {
				continue
			}
			found = true
			if f.Status != doctor.OK || !strings.Contains(f.Message, "serviceaccount default/"+scraperReader) {
				t.Errorf("metrics finding: %+v", f)
			}
		}
		if !found {
			t.Errorf("no metrics finding:\n%s", out)
		}
	})
	t.Run("queue close --wait is handled by the in-cluster serve", func(t *testing.T) {
		e.t = t
		if out, err := e.kubectlVC("queue", "create", "incluster-a", "--weight", "2"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		e.waitQueue("incluster-a", v1beta1.QueueStateOpen)
		if out, err := e.kubectlVC("queue", "close", "incluster-a", "--wait", "--timeout", "2m"); err != nil || !strings.Contains(out, "Closed") {
			t.Fatalf("queue close --wait: %v\n%s", err, out)
		}
	})
	t.Run("a Deployment of volcano pods is grouped", func(t *testing.T) {
		e.t = t
		e.volcanoDeployment("grouped", 2)
		e.waitGroup("grouped", 2, 2)
	})
	t.Run("serve's pods answer the queue webhook through its Service", func(t *testing.T) {
		e.t = t
		// The admission policies, as a user adds them to a running serve:
		// the index mode (serve is there), its webhook through serve's
		// Service; install returns once the API server calls it.
		out, err := e.kubectlVC("install", "--policies")
		if err != nil || !strings.Contains(out, "admission mode index") {
			t.Fatalf("install --policies beside serve: %v\n%s", err, out)
		}
		qs := e.vc.SchedulingV1beta1().Queues()
		parent := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "incluster-parent"},
			Spec: v1beta1.QueueSpec{Weight: 1, Capability: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}
		if _, err := qs.Create(ctx, parent, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		child := &v1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "incluster-child"},
			Spec: v1beta1.QueueSpec{Weight: 1, Parent: "incluster-parent", Capability: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}}}
		_, err = qs.Create(ctx, child, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), `admission webhook "`+keys.QueueWebhookName+`" denied the request: queue incluster-child exceeds its parent incluster-parent in capability cpu`) {
			// What the cluster has, to say why.
			vwc, verr := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
			var logs strings.Builder
			pods, _ := e.kube.CoreV1().Pods(serveNS).List(ctx, metav1.ListOptions{})
			for _, p := range pods.Items {
				raw, _ := e.kube.CoreV1().Pods(serveNS).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](20)}).DoRaw(ctx)
				fmt.Fprintf(&logs, "--- %s\n%s\n", p.Name, raw)
			}
			t.Fatalf("a child above its parent, in the cluster: %v\nwebhook configurations: %+v %v\n%s", err, vwc, verr, logs.String())
		}
	})
	t.Run("a DaemonSet's pod on the node is grouped", func(t *testing.T) {
		e.t = t
		labels := map[string]string{"app": "daemon"}
		_, err := e.kube.AppsV1().DaemonSets("default").Create(ctx, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "daemon"},
			Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: volcanoTemplate(labels)},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.waitGroup("daemon", 1, 1)
	})
	t.Run("deleting the leader hands over with nothing lost", func(t *testing.T) {
		e.t = t
		old, err := e.leader()
		if err != nil || old == "" {
			t.Fatalf("no leader: %q %v", old, err)
		}
		if err := e.kube.CoreV1().Pods(serveNS).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// Work submitted while the leader is gone is done by the new one.
		if out, err := e.kubectlVC("queue", "open", "incluster-a"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		e.volcanoDeployment("after-handover", 3)
		e.poll("another pod to take the Lease", 3*time.Minute, func() (bool, error) {
			l, err := e.leader()
			return l != "" && l != old, err
		})
		e.waitQueue("incluster-a", v1beta1.QueueStateOpen)
		e.waitGroup("after-handover", 3, 3)
		// The Deployment replaces the deleted pod; both replicas ready again.
		e.waitServeReady(2)
	})
	t.Run("a NodeSet's scale-in drains its Slurm node over REST first", func(t *testing.T) {
		e.t = t
		e.nodeSetOverREST(t)
	})
	t.Run("no request of serve was refused", func(t *testing.T) {
		e.t = t
		pods, err := e.kube.CoreV1().Pods(serveNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
				continue
			}
			// Read as a scraper reads it: HTTPS, the reader's token.
			code, raw, err := scrape("https://"+net.JoinHostPort(p.Status.PodIP, "8443")+"/metrics", tokens[scraperReader])
			if err != nil || code != 200 {
				t.Fatalf("metrics of %s: %d %v", p.Name, code, err)
			}
			all, found, err := cptest.MetricSum(strings.NewReader(raw), "rest_client_requests_total")
			if err != nil || !found || all == 0 {
				t.Fatalf("pod %s reports no API requests (found=%v, err=%v): the 403 count below would prove nothing", p.Name, found, err)
			}
			forbidden, _, _ := cptest.MetricSum(strings.NewReader(raw), "rest_client_requests_total", `code="403"`)
			if forbidden != 0 {
				t.Errorf("pod %s: %v requests refused with 403", p.Name, forbidden)
			}
			checked++
		}
		if checked == 0 {
			t.Fatal("no running serve pod to check")
		}
	})
}

// restrictedNamespace checks that serve's namespace enforces the
// restricted level, that the running pods were admitted under it, and that
// it is really enforced: a pod that asks for privilege escalation is
// refused there (server dry run).
func (e *env) restrictedNamespace() {
	e.t.Helper()
	ns, err := e.kube.CoreV1().Namespaces().Get(e.ctx, serveNS, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		e.t.Fatalf("namespace %s enforces %q", serveNS, got)
	}
	bad := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "not-restricted", Namespace: serveNS},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: controlplane.PauseImage,
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}}}},
	}
	_, err = e.kube.CoreV1().Pods(serveNS).Create(e.ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
		e.t.Fatalf("a pod that breaks the restricted level was not refused: %v", err)
	}
	pods, err := e.kube.CoreV1().Pods(serveNS).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + serveName})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range pods.Items {
		sc := p.Spec.SecurityContext
		if sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			e.t.Errorf("pod %s declares no RuntimeDefault seccomp profile", p.Name)
		}
	}
}

// metricsAccess scrapes every running serve pod at its address, and the
// metrics Service at its cluster IP, from the node with the three
// scrapers' tokens. The leader's metrics carry the queue counts.
func (e *env) metricsAccess(tokens map[string]string) {
	e.t.Helper()
	leader, err := e.leader()
	if err != nil {
		e.t.Fatal(err)
	}
	pods, err := e.kube.CoreV1().Pods(serveNS).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + serveName})
	if err != nil {
		e.t.Fatal(err)
	}
	checked := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			continue
		}
		base := "https://" + net.JoinHostPort(p.Status.PodIP, "8443")
		for _, tc := range []struct {
			who  string
			want int
		}{{"", 401}, {scraperNone, 403}, {scraperReader, 200}} {
			code, body, err := scrape(base+"/metrics", tokens[tc.who])
			if err != nil || code != tc.want {
				e.t.Errorf("pod %s as %q: %d %v, want %d: %.200s", p.Name, tc.who, code, err, tc.want, body)
			}
			if p.Name == leader && code == 200 && !strings.Contains(body, "volcano_queue_pod_group_") {
				e.t.Errorf("the leader %s has no volcano_queue_pod_group_ metrics", p.Name)
			}
		}
		// Without --profiling there is nothing under /debug/pprof/, for
		// a reader or anyone.
		if code, _, _ := scrape(base+"/debug/pprof/heap", tokens[scraperProfiler]); code != 404 {
			e.t.Errorf("pod %s: /debug/pprof/heap answered %d without --profiling", p.Name, code)
		}
		checked++
	}
	if checked != 2 {
		e.t.Errorf("checked %d pods, want 2", checked)
	}
	svc, err := e.kube.CoreV1().Services(serveNS).Get(e.ctx, "kubectl-vc-serve-metrics", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "https" {
		e.t.Errorf("metrics Service ports %+v", svc.Spec.Ports)
	}
	e.poll("the metrics Service to answer a reader", time.Minute, func() (bool, error) {
		code, _, err := scrape("https://"+net.JoinHostPort(svc.Spec.ClusterIP, "8443")+"/metrics", tokens[scraperReader])
		return code == 200, err
	})
}

// waitServeReady waits until the Deployment has n ready replicas, all on
// the node, and one of its pods holds the Lease.
func (e *env) waitServeReady(n int32) {
	e.t.Helper()
	e.poll(fmt.Sprintf("%d ready serve replicas", n), 4*time.Minute, func() (bool, error) {
		d, err := e.kube.AppsV1().Deployments(serveNS).Get(e.ctx, serveName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == n && d.Status.UpdatedReplicas == n && d.Status.Replicas == n, nil
	})
	pods, err := e.kube.CoreV1().Pods(serveNS).List(e.ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + serveName})
	if err != nil {
		e.t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		names[p.Name] = true
		if p.Spec.NodeName != controlplane.NodeName {
			e.t.Errorf("serve pod %s is on node %q", p.Name, p.Spec.NodeName)
		}
		if p.Spec.ServiceAccountName != serveName {
			e.t.Errorf("serve pod %s runs as %q", p.Name, p.Spec.ServiceAccountName)
		}
	}
	e.poll("a serve pod to hold the Lease", 2*time.Minute, func() (bool, error) {
		l, err := e.leader()
		return l != "" && names[l], err
	})
}

func (e *env) waitQueue(name string, state v1beta1.QueueState) {
	e.t.Helper()
	e.poll("queue "+name+" "+string(state), 2*time.Minute, func() (bool, error) {
		q, err := e.vc.SchedulingV1beta1().Queues().Get(e.ctx, name, metav1.GetOptions{})
		return err == nil && q.Status.State == state, ignoreNotFound(err)
	})
}

// volcanoDeployment creates a Deployment whose pods ask for the volcano
// scheduler in the default queue. They stay Pending (no Volcano scheduler
// runs), which is all the podgroup controller reads.
func (e *env) volcanoDeployment(name string, replicas int32) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	_, err := e.kube.AppsV1().Deployments("default").Create(e.ctx, &appsv1.Deployment{
		// The Deployment controller copies this annotation to the
		// ReplicaSet, whose annotations the podgroup controller reads.
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{keys.GroupMinMember: fmt.Sprint(replicas)}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: volcanoTemplate(labels),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
}

func volcanoTemplate(labels map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{keys.QueueName: "default"}},
		Spec: corev1.PodSpec{
			SchedulerName: "volcano",
			Containers:    []corev1.Container{{Name: "main", Image: controlplane.PauseImage, ImagePullPolicy: corev1.PullNever}},
		},
	}
}

// waitGroup waits until every pod of the workload labelled app=name
// carries the same group name and that PodGroup exists, owned by the
// pods' controller (the ReplicaSet or DaemonSet that made them), with the
// minMember the workload's group-min-member annotation asks for.
func (e *env) waitGroup(name string, pods, minMember int32) {
	e.t.Helper()
	e.poll("the pods of "+name+" grouped", 3*time.Minute, func() (bool, error) {
		list, err := e.kube.CoreV1().Pods("default").List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + name})
		if err != nil || int32(len(list.Items)) != pods {
			return false, err
		}
		group := list.Items[0].Annotations[keys.KubeGroupName]
		owner := metav1.GetControllerOf(&list.Items[0])
		for _, p := range list.Items {
			if group == "" || p.Annotations[keys.KubeGroupName] != group {
				return false, nil
			}
		}
		pg, err := e.vc.SchedulingV1beta1().PodGroups("default").Get(e.ctx, group, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		if owner == nil || !metav1.IsControlledBy(pg, &metav1.ObjectMeta{UID: owner.UID}) {
			return false, fmt.Errorf("group %s is not owned by the pods' controller %v: %v", group, owner, pg.OwnerReferences)
		}
		if pg.Spec.MinMember != minMember {
			return false, fmt.Errorf("group %s has minMember %d, want %d", group, pg.Spec.MinMember, minMember)
		}
		return true, nil
	})
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
