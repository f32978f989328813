package nodeset

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestChartNodeSetPodAsOperator: with the chart's Controller beside it, the
// pod serve creates for the chart's NodeSet (accepted by the real API
// server) is the operator's: slurmd configless from the Controller's
// slurmctld (-Z --conf-server slurm-controller.<namespace>:6817 and the
// quoted --conf), its env, probes, privileges and preStop, the Slurm key
// and log mounts, and the pod base (no service account token, no service
// links, the DNS search, the worker toleration). A NodeSet naming a
// Controller that does not exist gets its template as written. The field
// by field comparison with the operator's own pod is
// plugins/nodeset's TestOperatorPodFieldByField.
func TestChartNodeSetPodAsOperator(t *testing.T) {
	e := startWithoutController(t, "slinky", 1)
	// The chart's Controller for release "slurm", made before the
	// controller starts: its cache holds it when the NodeSet comes.
	if _, err := e.VC.SlinkyV1beta1().Controllers(e.NS).Create(e.Ctx, &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm"},
		Spec: slinkyv1beta1.ControllerSpec{
			SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-slurm"}, Key: "slurm.key"},
			JwtKeyRef:   &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-jwt"}, Key: "jwt.key"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.runControllerWith(controllerOptions{})
	ns := readNodeSet(t, "testdata/slinky-chart-nodeset.yaml")
	e.create(ns)
	e.Eventually("pod", func() (bool, string) { return e.Pods()["slurm-worker-slinky-0"] != nil, names(e.Pods()) })
	pod := e.Pods()["slurm-worker-slinky-0"]
	spec := pod.Spec

	if len(spec.Containers) != 1 || spec.Containers[0].Name != "slurmd" {
		t.Fatalf("containers: %+v", spec.Containers)
	}
	slurmd := spec.Containers[0]
	wantArgs := []string{"-Z", "--conf-server", "slurm-controller." + e.NS + ":6817", "--conf", `'Features=slinky Topology='"$SLINKY_TOPOLOGY"''`}
	if !slices.Equal(slurmd.Args, wantArgs) {
		t.Errorf("slurmd args %q, want %q", slurmd.Args, wantArgs)
	}
	env := map[string]corev1.EnvVar{}
	for _, v := range slurmd.Env {
		env[v.Name] = v
	}
	if v := env["SLINKY_TOPOLOGY"]; v.ValueFrom == nil || v.ValueFrom.FieldRef == nil ||
		v.ValueFrom.FieldRef.FieldPath != "metadata.annotations['topology.slinky.slurm.net/spec']" {
		t.Errorf("SLINKY_TOPOLOGY: %+v", v)
	}
	if env["POD_CPUS"].Value != "0" || env["POD_MEMORY"].Value != "0" {
		t.Errorf("POD_CPUS, POD_MEMORY: %+v", slurmd.Env)
	}
	probe := func(p *corev1.Probe, path string) string {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.StrVal != "slurmd" {
			return fmt.Sprintf("%+v", p)
		}
		return ""
	}
	for what, bad := range map[string]string{"startup": probe(slurmd.StartupProbe, "/livez"),
		"liveness": probe(slurmd.LivenessProbe, "/livez"), "readiness": probe(slurmd.ReadinessProbe, "/readyz")} {
		if bad != "" {
			t.Errorf("%s probe: %s", what, bad)
		}
	}
	if sc := slurmd.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged || sc.Capabilities == nil || len(sc.Capabilities.Add) != 4 {
		t.Errorf("securityContext: %+v", sc)
	}
	if l := slurmd.Lifecycle; l == nil || l.PreStop == nil || l.PreStop.Exec == nil ||
		!strings.Contains(strings.Join(l.PreStop.Exec.Command, " "), "state=down reason='kubectl-vc: pod is terminating'") {
		t.Errorf("preStop: %+v", l)
	}
	if len(slurmd.Ports) != 1 || slurmd.Ports[0].ContainerPort != 6818 || slurmd.Ports[0].Name != "slurmd" {
		t.Errorf("ports: %+v", slurmd.Ports)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range slurmd.VolumeMounts {
		mounts[m.Name] = m
	}
	if m := mounts["slurm-etc"]; m.MountPath != "/etc/slurm" || !m.ReadOnly {
		t.Errorf("slurm-etc mount: %+v", slurmd.VolumeMounts)
	}
	if m := mounts["slurm-logfile"]; m.MountPath != "/var/log/slurm" {
		t.Errorf("slurm-logfile mount: %+v", slurmd.VolumeMounts)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	if v := volumes["slurm-etc"]; v.Projected == nil || len(v.Projected.Sources) != 1 || v.Projected.Sources[0].Secret == nil ||
		v.Projected.Sources[0].Secret.Name != "slurm-auth-slurm" || v.Projected.Sources[0].Secret.Items[0].Key != "slurm.key" ||
		v.Projected.Sources[0].Secret.Items[0].Path != "slurm.key" || *v.Projected.DefaultMode != 0o600 {
		t.Errorf("slurm-etc volume: %+v", v)
	}
	if v := volumes["slurm-logfile"]; v.EmptyDir == nil || v.EmptyDir.Medium != corev1.StorageMediumMemory {
		t.Errorf("slurm-logfile volume: %+v", v)
	}
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Name != "logfile" {
		t.Errorf("init containers: %+v", spec.InitContainers)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken ||
		spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Errorf("automountServiceAccountToken %v, enableServiceLinks %v: want false", spec.AutomountServiceAccountToken, spec.EnableServiceLinks)
	}
	if d := spec.DNSConfig; d == nil || !slices.Equal(d.Searches, []string{"slurm-worker-slinky." + e.NS + ".svc.cluster.local"}) {
		t.Errorf("dnsConfig: %+v", d)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(x corev1.Toleration) bool {
		return x.Key == "nodeset.slinky.slurm.net/worker" && x.Effect == corev1.TaintEffectNoExecute && x.Operator == corev1.TolerationOpEqual
	}) {
		t.Errorf("tolerations: %+v", spec.Tolerations)
	}
	if spec.Subdomain != "slurm-worker-slinky" || spec.Hostname != "slinky-0" || spec.NodeSelector[corev1.LabelOSStable] != "linux" {
		t.Errorf("subdomain %q, hostname %q, nodeSelector %v", spec.Subdomain, spec.Hostname, spec.NodeSelector)
	}

	// A NodeSet whose Controller does not exist: the template as written.
	other := readNodeSet(t, "testdata/slinky-chart-nodeset.yaml")
	other.Name, other.Spec.ControllerRef.Name = "orphan", "no-such-controller"
	other.Spec.Template.PodSpec.Hostname = ""
	e.create(other)
	e.Eventually("the orphan's pod", func() (bool, string) { return e.Pods()["orphan-0"] != nil, names(e.Pods()) })
	o := e.Pods()["orphan-0"]
	if len(o.Spec.Containers) != 1 || len(o.Spec.Containers[0].Args) != 0 || o.Spec.AutomountServiceAccountToken != nil ||
		o.Spec.DNSConfig != nil || slices.ContainsFunc(o.Spec.Tolerations, func(x corev1.Toleration) bool { return x.Key == "nodeset.slinky.slurm.net/worker" }) {
		t.Errorf("a NodeSet without its Controller: %+v", o.Spec)
	}
}
