// The NodeSet part of TestServeInCluster: serve, deployed from its image,
// finds a NodeSet's slurmrestd as Slinky's operator does and drains a Slurm
// node over REST before the pod goes, all as its ServiceAccount. Slurm runs
// on the host (slurmtest's chroot daemons); slurmrestd listens on the node's
// bridge address, and the RestApi's Service reaches it the way a pod
// reaches anything behind a Service: kube-proxy's rules take the cluster IP
// to the endpoint.

package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// The Slinky-shaped objects of the scenario, named as Slinky's Helm chart
// names them in its namespace.
const (
	slurmNS      = "slurm"
	slurmCtrl    = "slurm"
	slurmRestApi = "slurm"
	slurmJWT     = "slurm-auth-jwt"
	slurmJWTKey  = "jwt.key"
	computeSet   = "slurm-compute"
	// drainPoll is the NodeSet controller's default wait between two looks
	// at a draining node (nodeset.Config.DrainPoll).
	drainPoll = 5 * time.Second
)

// nodeSetSuite is the Slurm the scenario runs: $KVC_TEST_SLURM when it
// names a REST suite, else the first.
func nodeSetSuite() slurmtest.RESTSuite {
	for _, s := range slurmtest.RESTSuites {
		if s.Name == os.Getenv("KVC_TEST_SLURM") {
			return s
		}
	}
	return slurmtest.RESTSuites[0]
}

// startSlurmOnNode starts slurmctld, a slurmd per node and slurmrestd, the
// latter listening on the node's bridge address (pods and the API server
// reach it there, nothing outside the machine does). It is stopped when
// the test ends. Without the chroots the test is skipped, or fails under
// CI=true.
func startSlurmOnNode(t *testing.T, nodes ...string) *slurmtest.RESTCluster {
	t.Helper()
	suite := nodeSetSuite()
	if err := slurmtest.RESTUnavailable(suite); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: required)", err)
		}
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := slurmtest.StartREST(ctx, suite, nodes, slurmtest.WithListenAddr(controlplane.NodeIP))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s logs:\n%s", suite.Name, c.LogTails(20))
		}
		c.Stop()
	})
	t.Logf("%s: slurmrestd at %s", suite.Name, c.URL)
	return c
}

// slinkyFixtures creates what Slinky's operator and chart would have made
// for a slurmrestd: the JWT key Secret, a Controller naming it, a RestApi of
// that Controller, and the RestApi's Service selecting a slurmrestd pod.
// That pod is a stand-in on the host's network, so its endpoint is the
// node's address, where the chroot's slurmrestd listens; the Service's
// targetPort is that slurmrestd's port. It returns the Service as created,
// with its cluster IP, once its endpoint is there and kube-proxy routes it.
func (e *env) slinkyFixtures(c *slurmtest.RESTCluster) *corev1.Service {
	e.t.Helper()
	ctx, t := e.ctx, e.t
	// The namespace exists (made before install, which names it in
	// --slurm-namespaces). The key Secret as Slinky's chart makes it
	// (helm/slurm/templates/secrets/jwtkey.yaml): serve signs with it
	// without a label of ours.
	if _, err := e.kube.CoreV1().Secrets(slurmNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: slurmJWT, Labels: map[string]string{
			"app.kubernetes.io/part-of": "slurm", "helm.sh/chart": "slurm-1.0.0", "app.kubernetes.io/managed-by": "Helm"}},
		Data: map[string][]byte{slurmJWTKey: c.JWTKey},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The auth key Secret: serve never reads it, but the slurmd pods it
	// renders from the Controller mount it at /etc/slurm, as the operator's
	// do, and would not start without it.
	if _, err := e.kube.CoreV1().Secrets(slurmNS).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm-auth-slurm"},
		Data:       map[string][]byte{"slurm.key": []byte("not a key: the stand-in slurmd reads nothing")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.vc.SlinkyV1beta1().Controllers(slurmNS).Create(ctx, &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: slurmCtrl},
		Spec: slinkyv1beta1.ControllerSpec{
			JwtKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: slurmJWT}, Key: slurmJWTKey},
			// Required by the CRD of a Controller that is not external.
			SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-slurm"}, Key: "slurm.key"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.vc.SlinkyV1beta1().RestApis(slurmNS).Create(ctx, &slinkyv1beta1.RestApi{
		ObjectMeta: metav1.ObjectMeta{Name: slurmRestApi},
		Spec:       slinkyv1beta1.RestApiSpec{ControllerRef: corev1.LocalObjectReference{Name: slurmCtrl}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// slurmrestd's pod, as Slinky runs one, but on the host's network: its
	// pod IP is the node's address, where the chroot's slurmrestd listens.
	// The Service selects it, so its endpoint is a pod, as the API server's
	// service proxy requires (describe reads Slurm through it).
	labels := map[string]string{"app.kubernetes.io/name": "slurmrestd", "app.kubernetes.io/instance": slurmRestApi}
	if _, err := e.kube.CoreV1().Pods(slurmNS).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: slurmRestApi + "-restapi-host", Labels: labels},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers:  []corev1.Container{{Name: "slurmrestd", Image: controlplane.PauseImage, ImagePullPolicy: corev1.PullNever}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svcName := slinkyv1beta1.RestApiServiceName(slurmRestApi)
	svc, err := e.kube.CoreV1().Services(slurmNS).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svcName},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{
			Name: "slurmrestd", Port: slinkyv1beta1.SlurmrestdPort, TargetPort: intstr.FromInt(c.Port), Protocol: corev1.ProtocolTCP,
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Fatalf("Service %s has no cluster IP", svcName)
	}
	e.poll("an endpoint of "+svcName+" at slurmrestd's address", 2*time.Minute, func() (bool, error) {
		list, err := e.kube.DiscoveryV1().EndpointSlices(slurmNS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svcName})
		if err != nil {
			return false, err
		}
		for _, sl := range list.Items {
			for _, ep := range sl.Endpoints {
				ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
				if ready && slices.Contains(ep.Addresses, controlplane.NodeIP) && len(sl.Ports) == 1 && ptr.Deref(sl.Ports[0].Port, 0) == int32(c.Port) {
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("slices: %+v", list.Items)
	})
	// Nothing may reach for the cluster IP before kube-proxy routes it.
	e.poll("kube-proxy's rule for "+svcName, time.Minute, func() (bool, error) {
		return serviceRouted(svc.Spec.ClusterIP, slinkyv1beta1.SlurmrestdPort)
	})
	return svc
}

// computeNodeSet creates the NodeSet: its slurmd container is the pause
// image (on the node already; the Slurm nodes themselves are the chroot's
// slurmds, named as the pods), and its pods share the one node. serve
// renders them from the Controller as Slinky's operator does, probed on
// slurmd's /livez and /readyz, which pause does not serve: the NodeSet
// gives probe handlers of its own (they replace the operator's), a TCP
// connect to the kubelet's port, which the kubelet itself makes.
func (e *env) computeNodeSet(replicas int32) {
	e.t.Helper()
	node, err := e.kube.CoreV1().Nodes().Get(e.ctx, controlplane.NodeName, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	kubelet := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
		Host: controlplane.NodeIP, Port: intstr.FromInt32(node.Status.DaemonEndpoints.KubeletEndpoint.Port)}}}
	_, err = e.vc.SlinkyV1beta1().NodeSets(slurmNS).Create(e.ctx, &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: computeSet},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef:     corev1.LocalObjectReference{Name: slurmCtrl},
			Replicas:          ptr.To(replicas),
			OversubscribeNode: true,
			Slurmd: corev1.Container{Name: "slurmd", Image: controlplane.PauseImage, ImagePullPolicy: corev1.PullNever,
				StartupProbe: kubelet, LivenessProbe: kubelet, ReadinessProbe: kubelet},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	// Gone before Slurm stops (cleanups run last first): serve has then no
	// reason to reach for the Service any more.
	e.t.Cleanup(func() {
		_ = e.vc.SlinkyV1beta1().NodeSets(slurmNS).Delete(context.Background(), computeSet, metav1.DeleteOptions{})
	})
}

func (e *env) nodeSet() (*slinkyv1beta1.NodeSet, error) {
	return e.vc.SlinkyV1beta1().NodeSets(slurmNS).Get(e.ctx, computeSet, metav1.GetOptions{})
}

// computePods are the NodeSet's pods by name.
func (e *env) computePods() (map[string]*corev1.Pod, error) {
	list, err := e.kube.CoreV1().Pods(slurmNS).List(e.ctx, metav1.ListOptions{
		LabelSelector: slinkyv1beta1.LabelAppInstance + "=" + computeSet})
	if err != nil {
		return nil, err
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// slurmClient reads Slurm directly (apart from serve), at slurmrestd's
// address on the host, with a token signed with the cluster's key.
func slurmClient(t *testing.T, c *slurmtest.RESTCluster) *slurm.REST {
	t.Helper()
	tok, err := slurm.NewSignedToken(c.JWTKey, "")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := slurm.NewREST(slurm.RESTConfig{URL: c.URL, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// nodeSetOverREST is the subtest: serve's NodeSet controller reaches the
// chroot's slurmrestd through the Service's cluster IP from its pod, and a
// scale-in drains the leaving node over REST, keeping its pod until the job
// on it ends.
func (e *env) nodeSetOverREST(t *testing.T) {
	pod0, pod1 := computeSet+"-0", computeSet+"-1"
	c := startSlurmOnNode(t, pod0, pod1)
	sl := slurmClient(t, c)
	svc := e.slinkyFixtures(c)
	e.computeNodeSet(2)

	e.poll("two NodeSet pods Ready on the node, Slurm read over REST through the Service", 4*time.Minute, func() (bool, error) {
		set, err := e.nodeSet()
		if err != nil {
			return false, ignoreNotFound(err)
		}
		pods, err := e.computePods()
		if err != nil {
			return false, err
		}
		for _, name := range []string{pod0, pod1} {
			if p := pods[name]; p == nil || !podReady(p) || p.Spec.NodeName != controlplane.NodeName {
				return false, nil
			}
		}
		cond := meta.FindStatusCondition(set.Status.Conditions, "SlurmReachable")
		if cond == nil || cond.Status != metav1.ConditionTrue {
			return false, fmt.Errorf("SlurmReachable: %+v", cond)
		}
		st := set.Status
		return st.ReadyReplicas == 2 && st.SlurmIdle == 2, fmt.Errorf("status %+v", st)
	})
	set, err := e.nodeSet()
	if err != nil {
		t.Fatal(err)
	}
	cond := meta.FindStatusCondition(set.Status.Conditions, "SlurmReachable")
	for _, want := range []string{"over REST v0.0.4", "http://" + svc.Spec.ClusterIP + ":6820",
		"RestApi " + slurmRestApi, "Controller " + slurmCtrl, "Secret " + slurmJWT} {
		if cond.Reason != "Refreshed" || !strings.Contains(cond.Message, want) {
			t.Fatalf("SlurmReachable does not say %q: %s: %s", want, cond.Reason, cond.Message)
		}
	}

	// Both Slurm nodes busy; the scale-in takes the highest ordinal.
	jobCtx, cancel := context.WithTimeout(e.ctx, 6*time.Minute)
	defer cancel()
	job0, err := c.Submit(jobCtx, pod0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	job1, err := c.Submit(jobCtx, pod1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.vc.SlinkyV1beta1().NodeSets(slurmNS).Patch(e.ctx, computeSet, types.MergePatchType,
		[]byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.poll(pod1+" draining in Slurm, its pod cordoned", 2*time.Minute, func() (bool, error) {
		st, err := sl.State(e.ctx, pod1)
		if err != nil {
			return false, err
		}
		pods, err := e.computePods()
		if err != nil {
			return false, err
		}
		p := pods[pod1]
		if p == nil || p.DeletionTimestamp != nil {
			return false, fmt.Errorf("%s deleted while its job runs (Slurm: %s)", pod1, st)
		}
		_, cordoned := p.Annotations[slinkyv1beta1.AnnotationPodCordon]
		return cordoned && st.Drain() && st.Busy() && st.Reason == "kubectl-vc: scale-in", fmt.Errorf("Slurm: %s, cordoned %v", st, cordoned)
	})
	since := time.Now()
	if st, err := sl.State(e.ctx, pod0); err != nil || st.Drain() {
		t.Fatalf("%s, which stays, is %s (%v)", pod0, st, err)
	}

	// Meanwhile, as a user: describe reads the live states through the API
	// server's proxy to the Service, doctor reports the NodeSet fine.
	out, err := e.kubectlVC("nodeset", "describe", computeSet, "-n", slurmNS)
	if err != nil {
		t.Fatalf("nodeset describe: %v\n%s", err, out)
	}
	t.Logf("nodeset describe %s while %s drains:\n%s", computeSet, pod1, out)
	if !strings.Contains(out, "Slurm States Read:") || !strings.Contains(out, "through the API server's proxy to Service "+svc.Name) ||
		!strings.Contains(out, "DRAINING (kubectl-vc: scale-in)") || strings.Contains(out, "warning:") {
		t.Errorf("nodeset describe shows no live Slurm states read through the Service:\n%s", out)
	}
	if f := e.doctorNodeSet(); f.Status != doctor.OK || !strings.Contains(f.Message, "over REST") {
		t.Errorf("doctor on the NodeSet: %+v", f)
	}

	// The pod stays while its job runs: over two of the controller's
	// looks at the draining node.
	for time.Since(since) < 2*drainPoll+2*time.Second {
		pods, err := e.computePods()
		if err != nil {
			t.Fatal(err)
		}
		if p := pods[pod1]; p == nil || p.DeletionTimestamp != nil {
			st, _ := sl.State(e.ctx, pod1)
			t.Fatalf("%s deleted while its job runs (Slurm: %s)", pod1, st)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if st, err := sl.State(e.ctx, pod1); err != nil || !st.Busy() {
		t.Fatalf("%s no longer busy before its job was cancelled: %s (%v)", pod1, st, err)
	}

	// The job ends: the node is drained, the pod goes.
	if err := c.Cancel(jobCtx, job1); err != nil {
		t.Fatal(err)
	}
	e.poll(pod1+" deleted once its job ended", 2*time.Minute, func() (bool, error) {
		pods, err := e.computePods()
		if err != nil {
			return false, err
		}
		return pods[pod1] == nil && pods[pod0] != nil && pods[pod0].DeletionTimestamp == nil, nil
	})
	if st, err := sl.State(e.ctx, pod1); err != nil || st.String() != "DRAINED (kubectl-vc: scale-in)" {
		t.Fatalf("%s after the scale-in: %s (%v)", pod1, st, err)
	}
	if st, err := sl.State(e.ctx, pod0); err != nil || !st.Busy() || st.Drain() {
		t.Fatalf("%s, which stays, is %s (%v)", pod0, st, err)
	}
	if err := c.Cancel(jobCtx, job0); err != nil {
		t.Fatal(err)
	}
	// Every look serve took at Slurm worked: the Service was routed before
	// the NodeSet existed, and the key was the cluster's.
	events, err := e.kube.CoreV1().Events(slurmNS).List(e.ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + computeSet + ",reason=SlurmUnreachable"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		t.Errorf("serve could not reach Slurm (%d times): %s", ev.Count, ev.Message)
	}
}

// doctorNodeSet is doctor's finding about the NodeSet.
func (e *env) doctorNodeSet() doctor.Finding {
	e.t.Helper()
	// doctor exits non-zero when any check fails (not ours to judge here);
	// its report is on stdout alone.
	ctx, cancel := context.WithTimeout(e.ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.binary, "doctor", "-o", "json")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	out := string(raw)
	var r doctor.Report
	if jerr := json.Unmarshal(raw, &r); jerr != nil {
		e.t.Fatalf("doctor -o json: %v, %v\n%s%s", err, jerr, out, stderr.String())
	}
	for _, f := range r.Checks {
		if f.Check == "nodesets" && slices.Contains(f.Objects, slurmNS+"/"+computeSet) {
			return f
		}
	}
	e.t.Fatalf("doctor says nothing about NodeSet %s/%s:\n%s", slurmNS, computeSet, out)
	return doctor.Finding{}
}

// serviceRouted says whether kube-proxy has written the nat rule that sends
// ip:port to the Service's endpoints.
func serviceRouted(ip string, port int32) (bool, error) {
	ipt, err := exec.LookPath("iptables")
	if err != nil {
		ipt = "/usr/sbin/iptables"
	}
	out, err := exec.Command(ipt, "-w", "-t", "nat", "-S", "KUBE-SERVICES").Output()
	if err != nil {
		return false, fmt.Errorf("iptables -t nat -S KUBE-SERVICES: %w", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, " -d "+ip+"/32 ") && strings.Contains(l, fmt.Sprintf(" --dport %d ", port)) && strings.Contains(l, " -j KUBE-SVC-") {
			return true, nil
		}
	}
	return false, nil
}
