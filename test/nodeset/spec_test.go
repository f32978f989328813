package nodeset

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

func (e *env) condition(name, typ string) *metav1.Condition {
	e.T.Helper()
	return meta.FindStatusCondition(e.Get(name).Status.Conditions, typ)
}

// TestUnsupportedSpecNotIgnored: what the controller does not implement is
// said, never silently ignored. A NodeSet whose ordinalPadding makes pod
// names longer than a hostname is refused (no pod is made for it) with a
// Warning event; once it is not, fields this controller acts on (ssh,
// claim retention, logfile) list nothing, and
// OnDelete replaces no pod by itself. (ScheduledUpdate, refused only where
// Slurm cannot make reservations, is TestScheduledUpdate's.)
func TestUnsupportedSpecNotIgnored(t *testing.T) {
	e := startWithoutController(t, "uns", 2)
	e.runControllerWith(controllerOptions{events: true})

	// "uns-" and 60 digits: 64 characters, one more than a hostname.
	ns := e.NewNodeSet("uns", 2, func(ns *slinkyv1beta1.NodeSet) { ns.Spec.OrdinalPadding = 60 })
	e.Eventually("padding past a hostname refused", func() (bool, string) {
		c := e.condition("uns", "SpecSupported")
		return c != nil && c.Status == metav1.ConditionFalse && e.Get("uns").Status.ObservedGeneration == ns.Generation, fmt.Sprint(c)
	})
	if c := e.condition("uns", "SpecSupported"); !strings.Contains(c.Message, "ordinalPadding 60 makes pod names longer than 63 characters") ||
		!strings.Contains(c.Message, "at most 59 with this name") {
		t.Fatalf("condition: %+v", c)
	}
	if n := len(e.Pods()); n != 0 {
		t.Fatalf("%d pods made for a refused NodeSet", n)
	}
	e.Eventually("Warning event", func() (bool, string) {
		ev := e.events("uns", "UnsupportedSpec")
		return len(ev) > 0 && strings.Contains(ev[0], "ordinalPadding"), fmt.Sprint(ev)
	})
	e.PatchNodeSet("uns", `{"spec":{"ordinalPadding":0}}`)
	e.Eventually("padding within a hostname: pods, spec supported", func() (bool, string) {
		c := e.condition("uns", "SpecSupported")
		return len(e.Pods()) == 2 && c != nil && c.Status == metav1.ConditionTrue, fmt.Sprint(c)
	})
	e.MarkAllReady()

	e.PatchNodeSet("uns", `{"spec":{"updateStrategy":{"type":"OnDelete"},`+
		`"persistentVolumeClaimRetentionPolicy":{"whenScaled":"Delete"},"ssh":{"enabled":true,"sssdConfRef":{"name":"sssd","key":"sssd.conf"}},`+
		`"logfile":{"name":"logfile","image":"alpine"}}}`)
	acted := e.Get("uns").Generation
	// ssh, claim retention and logfile are acted on (TestSSH,
	// TestClaimRetentionDelete, TestLogfileSidecar).
	e.Eventually("nothing listed", func() (bool, string) {
		c := e.condition("uns", "SpecSupported")
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == acted, fmt.Sprint(c)
	})
	uids := map[string]types.UID{}
	for n, p := range e.Pods() {
		uids[n] = p.UID
	}
	e.PatchNodeSet("uns", `{"spec":{"template":{"metadata":{"labels":{"team":"other"}}}}}`)
	gen := e.Get("uns").Generation
	e.Eventually("template change seen", func() (bool, string) {
		st := e.Get("uns").Status
		return st.ObservedGeneration == gen && st.UpdatedReplicas == 0, fmt.Sprintf("%+v", st)
	})
	for n, p := range e.Pods() {
		if p.UID != uids[n] || p.Annotations[slinkyv1beta1.AnnotationPodCordon] != "" {
			t.Fatalf("OnDelete touched %s", n)
		}
	}
}

// TestCreatesCappedPerSync: one sync creates at most 250 pods, as Slinky's
// operator (burstReplicas); the rest come with the next sync.
func TestCreatesCappedPerSync(t *testing.T) {
	e := startWithoutController(t, "burst", 1)
	e.runControllerWith(controllerOptions{events: true})
	t.Cleanup(func() {
		_ = e.VC.SlinkyV1beta1().NodeSets(e.NS).Delete(e.Ctx, "burst", metav1.DeleteOptions{})
		_ = e.Kube.CoreV1().Pods(e.NS).DeleteCollection(e.Ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	})
	e.NewNodeSet("burst", 251)
	e.Eventually("251 pods", func() (bool, string) { n := len(e.Pods()); return n == 251, fmt.Sprint(n) })
	e.Eventually("two scale-up events", func() (bool, string) {
		ev := e.events("burst", "ScaleUp")
		return len(ev) == 2, fmt.Sprint(ev)
	})
	got := strings.Join(e.events("burst", "ScaleUp"), "|")
	if !strings.Contains(got, "creating 250 pod(s)") || !strings.Contains(got, "creating 1 pod(s)") {
		t.Fatalf("scale-up events: %s", got)
	}
}

// TestUnavailableCountsPods: unavailableReplicas counts the NodeSet's pods
// that are not available, as Slinky's operator counts them, not the pods
// missing: with ordinal 2 refused by admission, 2 of 3 pods exist, both
// available, none unavailable. The refusal is a Warning event.
func TestUnavailableCountsPods(t *testing.T) {
	e := startWithoutController(t, "una", 3)
	name := "refuse-una-2-" + e.NS
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: `object.metadata.name != "una-2"`, Message: "no una-2 here"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: e.NS}}}},
	}
	if _, err := e.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(e.Ctx, vap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(e.Ctx, name, metav1.DeleteOptions{})
	})
	if _, err := e.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(e.Ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(e.Ctx, name, metav1.DeleteOptions{})
	})
	// The policy is in force once it refuses a pod of that name.
	e.Eventually("policy in force", func() (bool, string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "una-2", Namespace: e.NS},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
		_, err := e.Kube.CoreV1().Pods(e.NS).Create(e.Ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "no una-2 here"), fmt.Sprint(err)
	})

	e.runControllerWith(controllerOptions{events: true})
	e.NewNodeSet("una", 3)
	e.Eventually("two available pods, none unavailable", func() (bool, string) {
		e.MarkAllReady()
		st := e.Get("una").Status
		return st.Replicas == 2 && st.AvailableReplicas == 2 && st.UnavailableReplicas == 0 && st.Desired == 3, fmt.Sprintf("%+v", st)
	})
	e.Eventually("the refused create reported", func() (bool, string) {
		ev := e.events("una", "FailedCreate")
		return len(ev) > 0 && strings.Contains(ev[0], "una-2"), fmt.Sprint(ev)
	})
}

// TestPodDeletionCost: a scale-in takes the pod of lowest
// pod-deletion-cost first, as Slinky's operator does, before the highest
// ordinal.
func TestPodDeletionCost(t *testing.T) {
	e := start(t, "cost", 3)
	e.NewNodeSet("cost", 3)
	e.Eventually("three ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 3, fmt.Sprint(n) })
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"-5"}}}`, slinkyv1beta1.AnnotationPodDeletionCost)
	if _, err := e.Kube.CoreV1().Pods(e.NS).Patch(e.Ctx, "cost-0", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.PatchNodeSet("cost", `{"spec":{"replicas":2}}`)
	e.Eventually("cost-0 removed", func() (bool, string) {
		p := e.Pods()
		return names(p) == "cost-1,cost-2", names(p)
	})
}

// TestPodSpecFromNodeSet: volumeClaimTemplates give each pod a claim of
// its own, <template>-<pod>, created before it and kept after it (claims
// are retained); the template's volume mount finds it. Pods keep off nodes
// that run another slurmd pod (required anti-affinity) unless
// oversubscribeNode.
func TestPodSpecFromNodeSet(t *testing.T) {
	e := start(t, "vct", 1)
	e.NewNodeSet("vct", 1, func(ns *slinkyv1beta1.NodeSet) {
		ns.Labels = map[string]string{"site": "north"}
		ns.Annotations = map[string]string{"note": "from the NodeSet", corev1.LastAppliedConfigAnnotation: "{}"}
		ns.Spec.Slurmd.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		ns.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"tier": "scratch"}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}}
	})
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	pod := e.Pods()["vct-0"]
	// Labels and annotations as Slinky's operator sets them.
	for k, v := range map[string]string{"site": "north", "team": "hpc", slinkyv1beta1.LabelCluster: "slurm",
		slinkyv1beta1.LabelAppName: "slurmd", slinkyv1beta1.LabelAppInstance: "vct", slinkyv1beta1.LabelAppComponent: "worker",
		slinkyv1beta1.LabelPodIndex: "0", slinkyv1beta1.LabelPodName: "vct-0", slinkyv1beta1.LabelPodHostname: "vct-0",
		slinkyv1beta1.LabelScalingMode: "StatefulSet"} {
		if pod.Labels[k] != v {
			t.Errorf("label %s=%q, want %q", k, pod.Labels[k], v)
		}
	}
	if pod.Labels[slinkyv1beta1.LabelRevisionHash] == "" {
		t.Errorf("no revision hash label: %v", pod.Labels)
	}
	for k, v := range map[string]string{"note": "from the NodeSet", slinkyv1beta1.AnnotationDefaultContainer: "slurmd"} {
		if pod.Annotations[k] != v {
			t.Errorf("annotation %s=%q, want %q", k, pod.Annotations[k], v)
		}
	}
	if _, ok := pod.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
		t.Errorf("the NodeSet's last-applied configuration copied to its pod")
	}
	var claim string
	for _, v := range pod.Spec.Volumes {
		if v.Name == "data" && v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if claim != "data-vct-0" {
		t.Fatalf("volumes %+v", pod.Spec.Volumes)
	}
	pvc, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Get(e.Ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Labels["tier"] != "scratch" || pvc.Labels[slinkyv1beta1.LabelAppInstance] != "vct" || pvc.Spec.Resources.Requests.Storage().String() != "1Gi" {
		t.Fatalf("claim: %+v", pvc.ObjectMeta)
	}
	aa := pod.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aa.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != corev1.LabelHostname {
		t.Fatalf("anti-affinity: %+v", aa)
	}

	e.PatchNodeSet("vct", `{"spec":{"replicas":0}}`)
	e.Eventually("pod gone", func() (bool, string) { return len(e.Pods()) == 0, names(e.Pods()) })
	if _, err := e.Kube.CoreV1().PersistentVolumeClaims(e.NS).Get(e.Ctx, claim, metav1.GetOptions{}); err != nil {
		t.Fatalf("claim not retained: %v", err)
	}

	e.PatchNodeSet("vct", `{"spec":{"replicas":1,"oversubscribeNode":true}}`)
	e.Eventually("pod back, without anti-affinity", func() (bool, string) {
		p := e.Pods()["vct-0"]
		return p != nil && (p.Spec.Affinity == nil || p.Spec.Affinity.PodAntiAffinity == nil), names(e.Pods())
	})

	// The index label is the ordinal as in the name: padded.
	e.NewNodeSet("vcp", 1, func(ns *slinkyv1beta1.NodeSet) { ns.Spec.OrdinalPadding = 3 })
	e.Eventually("padded pod", func() (bool, string) {
		p := e.Pods()["vcp-000"]
		return p != nil && p.Labels[slinkyv1beta1.LabelPodIndex] == "000" && p.Labels[slinkyv1beta1.LabelPodHostname] == "vcp-000", names(e.Pods())
	})
}

// TestLogfileSidecar: spec.logfile is the sidecar Slinky's operator adds:
// a restartable init container of that image copying slurmd's log FIFO
// (/var/log/slurm/slurmd.log, SOCKET) to its output, a memory-backed
// volume both mount, and nothing listed in SpecSupported. Its own fields
// win over the defaults.
func TestLogfileSidecar(t *testing.T) {
	e := start(t, "lf", 1)
	e.NewNodeSet("lf", 1, func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.LogFile = corev1.Container{Image: "docker.io/library/alpine:latest",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}}}
	})
	e.Eventually("pod", func() (bool, string) { return len(e.Pods()) == 1, names(e.Pods()) })
	pod := e.Pods()["lf-0"]
	if len(pod.Spec.InitContainers) != 1 {
		t.Fatalf("init containers: %+v", pod.Spec.InitContainers)
	}
	lf := pod.Spec.InitContainers[0]
	if lf.Name != "logfile" || lf.Image != "docker.io/library/alpine:latest" || lf.RestartPolicy == nil ||
		*lf.RestartPolicy != corev1.ContainerRestartPolicyAlways || lf.Resources.Limits.Memory().String() != "32Mi" ||
		len(lf.Env) != 1 || lf.Env[0].Name != "SOCKET" || lf.Env[0].Value != "/var/log/slurm/slurmd.log" ||
		len(lf.Command) != 3 || !strings.Contains(lf.Command[2], "mkfifo") {
		t.Fatalf("logfile sidecar: %+v", lf)
	}
	mounted := func(c corev1.Container) bool {
		for _, m := range c.VolumeMounts {
			if m.Name == "slurm-logfile" && m.MountPath == "/var/log/slurm" {
				return true
			}
		}
		return false
	}
	if !mounted(lf) || pod.Spec.Containers[0].Name != "slurmd" || !mounted(pod.Spec.Containers[0]) {
		t.Fatalf("mounts: %+v / %+v", lf.VolumeMounts, pod.Spec.Containers[0].VolumeMounts)
	}
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == "slurm-logfile" {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.EmptyDir == nil || vol.EmptyDir.Medium != corev1.StorageMediumMemory {
		t.Fatalf("volume: %+v", pod.Spec.Volumes)
	}
	e.Eventually("spec supported", func() (bool, string) {
		c := e.condition("lf", "SpecSupported")
		return c != nil && c.Status == metav1.ConditionTrue, fmt.Sprint(c)
	})
}
