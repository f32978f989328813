package nodeset

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// operatorPodDifferences are the only fields in which serve's pod for the
// chart's NodeSet may differ from the operator's
// (testdata/operator-pod-slinky-chart.yaml), each with its reason; the same
// list is in docs/nodeset.md. Paths name list items by their name.
var operatorPodDifferences = map[string]string{
	// The operator hashes its revision data with "containers":null for a
	// template without containers; serve hashes it with nulls dropped (as
	// the API server stores it, history.go). Revisions are compared by
	// content, so a NodeSet taken over keeps the operator's revision and
	// its pods; only a revision serve makes first has another name.
	"metadata.labels.controller.kubernetes.io/hash": "revision hash over data without nulls",
	// Kubernetes' GetPodFromTemplate sets it; the pod has a name, so the
	// API server never uses it.
	"metadata.generateName": "unused: the pod is named",
	// The pod's Service is the NodeSet's own headless Service (serve makes
	// one per NodeSet), not the operator's per-Controller
	// slurm-workers-<controller>, which serve does not make.
	"spec.subdomain":          "the NodeSet's own headless Service",
	"spec.dnsConfig.searches": "that Service's domain",
	// The preStop's DOWN reason carries serve's prefix, which serve
	// resumes, as it prefixes every reason it sets.
	"spec.containers[slurmd].lifecycle.preStop.exec.command": "reason prefixed kubectl-vc:",
	// serve's label on what it makes, which its caches select (owned.go).
	"metadata.labels.kubectl-vc.io/managed-by": "serve's own objects are labelled",
	// The logfile script is ours (the FIFO mode 0666, not 0777).
	"spec.initContainers[logfile].command": "our logfile script",
}

// chartNodeSet is test/nodeset's chart NodeSet in namespace "slurm", with
// the uid the operator's pod was rendered with.
func chartNodeSet(t *testing.T) *slinkyv1beta1.NodeSet {
	t.Helper()
	data, err := os.ReadFile("../../test/nodeset/testdata/slinky-chart-nodeset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := &slinkyv1beta1.NodeSet{}
	if err := yaml.UnmarshalStrict(data, ns); err != nil {
		t.Fatal(err)
	}
	ns.Namespace, ns.UID = "slurm", types.UID("00000000-0000-0000-0000-000000000001")
	return ns
}

// chartController is the chart's Controller for release "slurm".
func chartController() *slinkyv1beta1.Controller {
	return &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm", Namespace: "slurm"},
		Spec: slinkyv1beta1.ControllerSpec{
			SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-slurm"}, Key: "slurm.key"},
			JwtKeyRef:   &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-auth-jwt"}, Key: "jwt.key"},
		},
	}
}

// TestOperatorPodFieldByField: serve's pod for the chart's NodeSet and
// Controller equals the operator's, leaf by leaf, but for the listed
// differences, each of which must still differ (a difference fixed is
// taken off the list).
func TestOperatorPodFieldByField(t *testing.T) {
	ns := chartNodeSet(t)
	data, err := revisionData(ns)
	if err != nil {
		t.Fatal(err)
	}
	ours := newPod(ns, &podBase{controller: chartController(), clusterDomain: defaultDomain}, 0, revisionHash(data, 0))
	raw, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	opData, err := os.ReadFile("testdata/operator-pod-slinky-chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(opData, &want); err != nil {
		t.Fatal(err)
	}
	delete(want, "apiVersion")
	delete(want, "kind")
	g, w := leaves(got), leaves(want)
	differs := map[string]bool{}
	for _, p := range unionKeys(g, w) {
		gv, gok := g[p]
		wv, wok := w[p]
		if gok == wok && reflect.DeepEqual(gv, wv) {
			continue
		}
		allowed := ""
		for prefix := range operatorPodDifferences {
			if p == prefix || strings.HasPrefix(p, prefix+".") || strings.HasPrefix(p, prefix+"[") {
				allowed = prefix
			}
		}
		if allowed == "" {
			t.Errorf("%s: ours %s, the operator's %s", p, show(gv, gok), show(wv, wok))
			continue
		}
		differs[allowed] = true
	}
	for p, why := range operatorPodDifferences {
		if !differs[p] {
			t.Errorf("%s is listed as a difference (%s) but is the operator's now: take it off the list", p, why)
		}
	}
}

func show(v any, ok bool) string {
	if !ok {
		return "absent"
	}
	return fmt.Sprintf("%#v", v)
}

func unionKeys(a, b map[string]any) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// leaves flattens a JSON object into path → scalar; list items are named
// by their "name" when they have one, else by position. Empty objects and
// lists are leaves too, so that {} against absent counts.
func leaves(v any) map[string]any {
	out := map[string]any{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out[path] = x
			}
			for k, e := range x {
				walk(strings.TrimPrefix(path+"."+k, "."), e)
			}
		case []any:
			if len(x) == 0 {
				out[path] = x
			}
			for i, e := range x {
				key := fmt.Sprint(i)
				if m, ok := e.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						key = n
					}
				}
				walk(fmt.Sprintf("%s[%s]", path, key), e)
			}
		default:
			out[path] = x
		}
	}
	walk("", v)
	return out
}

// TestSlurmdConf: --conf as the operator writes it, from extraConf.
func TestSlurmdConf(t *testing.T) {
	for _, tc := range []struct{ hostname, extra, want string }{
		{"", "", `'Features=ns Topology='"$SLINKY_TOPOLOGY"''`},
		{"slinky-", "", `'Features=slinky Topology='"$SLINKY_TOPOLOGY"''`},
		{"   ", "", `'Features=ns Topology='"$SLINKY_TOPOLOGY"''`},
		// Keys title-cased, features merged and sorted, values of a key
		// repeated joined.
		{"", "feature=b,a Features=c realmemory=100 Gres=gpu:1 gres=nic:2",
			`'Features=a,b,c,ns Gres=gpu:1,nic:2 Realmemory=100 Topology='"$SLINKY_TOPOLOGY"''`},
		// Not Key=Value pairs: ignored, as the operator ignores it.
		{"", "Weight=1 garbage", `'Features=ns Topology='"$SLINKY_TOPOLOGY"''`},
	} {
		ns := &slinkyv1beta1.NodeSet{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
		ns.Spec.Template.PodSpec.Hostname = tc.hostname
		ns.Spec.ExtraConf = tc.extra
		if got := slurmdConf(ns); got != tc.want {
			t.Errorf("hostname %q extraConf %q: %s, want %s", tc.hostname, tc.extra, got, tc.want)
		}
	}
}

// TestPodBaseHostile: a template and a Controller with odd values still
// give a valid pod: template values win where the operator lets them, a
// template's "$patch" keys are not merge directives, a Controller without
// a key Secret or with an unusable external address gives no volume of no
// name and no --conf-server, and without a Controller the pod is the
// template as written.
func TestPodBaseHostile(t *testing.T) {
	ns := chartNodeSet(t)
	ns.Spec.Template.PodSpec.Tolerations = []corev1.Toleration{{Key: "mine", Operator: corev1.TolerationOpExists}}
	ns.Spec.Template.PodSpec.AutomountServiceAccountToken = ptrTo(true)
	ns.Spec.Template.PodSpec.NodeSelector = map[string]string{"$patch": "delete", "zone": "a"}
	ns.Spec.Template.PodSpec.Volumes = []corev1.Volume{{Name: slurmEtcVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: "mine"}}}}
	ns.Spec.Slurmd.Env = []corev1.EnvVar{{Name: "SLINKY_TOPOLOGY", Value: "fixed"}}
	ns.Spec.Slurmd.Args = []string{"-vvv"}
	ns.Spec.Slurmd.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	ns.Spec.Slurmd.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, PeriodSeconds: 7}
	base := &podBase{controller: chartController(), clusterDomain: defaultDomain}
	pod := newPod(ns, base, 0, "h")
	spec := pod.Spec
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "mine" {
		t.Errorf("tolerations: the template's replace the operator's: %+v", spec.Tolerations)
	}
	if spec.AutomountServiceAccountToken == nil || !*spec.AutomountServiceAccountToken {
		t.Error("the template's automountServiceAccountToken: true wins")
	}
	if len(spec.NodeSelector) != 1 || spec.NodeSelector["zone"] != "a" {
		t.Errorf("nodeSelector: %v", spec.NodeSelector)
	}
	var etc *corev1.Volume
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == slurmEtcVolume {
			etc = &spec.Volumes[i]
		}
	}
	if etc == nil || etc.Secret == nil || etc.Projected != nil {
		t.Errorf("the template's slurm-etc replaces ours whole: %+v", etc)
	}
	slurmd := spec.Containers[0]
	if slurmd.Name != "slurmd" || slurmd.Args[0] != "-Z" || slurmd.Args[len(slurmd.Args)-1] != "-vvv" {
		t.Errorf("slurmd args: %q", slurmd.Args)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range slurmd.Env {
		env[e.Name] = e
	}
	if e := env["SLINKY_TOPOLOGY"]; e.Value != "fixed" || e.ValueFrom != nil {
		t.Errorf("SLINKY_TOPOLOGY: %+v", e)
	}
	if env["POD_CPUS"].Value != "2" || env["POD_MEMORY"].Value != "2048" {
		t.Errorf("POD_CPUS %q POD_MEMORY %q", env["POD_CPUS"].Value, env["POD_MEMORY"].Value)
	}
	if p := slurmd.ReadinessProbe; p.Exec == nil || p.HTTPGet != nil || p.PeriodSeconds != 7 {
		t.Errorf("readiness probe: spec.slurmd's handler replaces ours: %+v", p)
	}

	// A Controller without a key Secret, external without a usable
	// address.
	ctrl := chartController()
	ctrl.Spec.SlurmKeyRef = nil
	ctrl.Spec.External = true
	ctrl.Spec.ExternalConfig = &slinkyv1beta1.ExternalConfig{Host: "bad host; rm -rf /", Port: 6817}
	ns = chartNodeSet(t)
	pod = newPod(ns, &podBase{controller: ctrl, clusterDomain: defaultDomain}, 0, "h")
	for _, v := range pod.Spec.Volumes {
		if v.Name == slurmEtcVolume {
			t.Errorf("a volume without a Secret: %+v", v)
		}
	}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if m.Name == slurmEtcVolume {
			t.Errorf("a mount of no volume: %+v", m)
		}
	}
	if strings.Contains(strings.Join(pod.Spec.Containers[0].Args, " "), "--conf-server") {
		t.Errorf("--conf-server of a bad address: %q", pod.Spec.Containers[0].Args)
	}
	ctrl.Spec.ExternalConfig = &slinkyv1beta1.ExternalConfig{Host: "slurmctld.example.com", Port: 6817}
	pod = newPod(ns, &podBase{controller: ctrl, clusterDomain: defaultDomain}, 0, "h")
	if a := pod.Spec.Containers[0].Args; len(a) < 3 || a[1] != "--conf-server" || a[2] != "slurmctld.example.com:6817" {
		t.Errorf("external conf server: %q", a)
	}

	// No Controller: the template and spec.slurmd as written.
	pod = newPod(ns, nil, 0, "h")
	if a := pod.Spec.Containers[0].Args; len(a) != 0 || pod.Spec.AutomountServiceAccountToken != nil || len(pod.Spec.Tolerations) != 0 {
		t.Errorf("without a Controller: %+v", pod.Spec)
	}
}

// TestClusterDomainFrom: the domain after "svc." in resolv.conf's search
// line, else cluster.local.
func TestClusterDomainFrom(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		"search ns1.svc.k8s.example svc.k8s.example k8s.example\nnameserver 10.0.0.10\n": "k8s.example",
		"nameserver 1.1.1.1\n":  defaultDomain,
		"search svc.\n":         defaultDomain,
		"search svc.Bad_Name\n": defaultDomain,
	} {
		p := dir + "/resolv.conf"
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := clusterDomainFrom(p); got != want {
			t.Errorf("%q: %q, want %q", content, got, want)
		}
	}
	if got := clusterDomainFrom(dir + "/missing"); got != defaultDomain {
		t.Errorf("missing file: %q", got)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestWorkerTaintTolerated: with a Controller, DaemonSet mode places pods
// on nodes tainted for Slurm workers (the pods tolerate the taint, as the
// operator's do), unless the template lists tolerations of its own, which
// replace the operator's; the placement reads the tolerations the pods get.
func TestWorkerTaintTolerated(t *testing.T) {
	tainted := dsNode("w", func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: workerTaintKey, Effect: corev1.TaintEffectNoExecute}}
	})
	base := &podBase{controller: chartController(), clusterDomain: defaultDomain}
	ns := dsNodeSet()
	for _, tc := range []struct {
		base *podBase
		own  []corev1.Toleration
		run  bool
	}{
		{nil, nil, false},
		{base, nil, true},
		{base, []corev1.Toleration{{Key: "other", Operator: corev1.TolerationOpExists}}, false},
	} {
		ns.Spec.Template.PodSpec.Tolerations = tc.own
		run, keep := nodeWantsPod(klog.Background(), templatePod(ns, tc.base), tainted)
		if run != tc.run || keep != tc.run {
			t.Errorf("base %v, tolerations %v: run %v keep %v, want %v", tc.base != nil, tc.own, run, keep, tc.run)
		}
		pod := newDaemonPod(ns, tc.base, tainted, "h")
		if !reflect.DeepEqual(pod.Spec.Tolerations, podTolerations(ns, tc.base)) {
			t.Errorf("base %v, tolerations %v: the pod tolerates %v, placement reads %v", tc.base != nil, tc.own, pod.Spec.Tolerations, podTolerations(ns, tc.base))
		}
	}
}
