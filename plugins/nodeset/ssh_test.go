package nodeset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

func sshNodeSet(extra string) *slinkyv1beta1.NodeSet {
	ns := testNodeSet(1)
	ns.Spec.SSH = &slinkyv1beta1.NodeSetSSH{Enabled: true, ExtraSshdConfig: extra,
		SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}, Key: "sssd.conf"}}
	return ns
}

// TestSSHDConfigAsOperatorWrites: the sshd_config is the operator's text,
// byte for byte (its builder joins the lines with a newline and ends with
// one), and its hash the SHA-256 of it.
func TestSSHDConfigAsOperatorWrites(t *testing.T) {
	ns := sshNodeSet("LoginGraceTime 600")
	want := "#\n### GENERAL ###\nInclude /etc/ssh/sshd_config.d/*.conf\nUsePAM yes\nSubsystem sftp internal-sftp\n" +
		"AuthenticationMethods publickey password\n#\n### EXTRA CONFIG ###\nLoginGraceTime 600\n"
	if got := sshdConfig(ns); got != want {
		t.Fatalf("sshd_config:\n%q\nwant\n%q", got, want)
	}
	if got := sshdConfigHash(ns); got != sha256Hex(want) || len(got) != 64 {
		t.Fatalf("hash %q", got)
	}
	ns.Spec.SSH.Enabled = false
	if got := sshdConfigHash(ns); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("hash with ssh off %q, want the SHA-256 of nothing", got)
	}
}

// TestSSHProblems: an sshd_config a ConfigMap cannot hold (extraSshdConfig
// is unbounded in the schema) and an sssdConfRef without name or key are
// refused, saying so without repeating the text.
func TestSSHProblems(t *testing.T) {
	fits := strings.Repeat("x", corev1.MaxSecretSize-len(sshdConfigGeneral)-1)
	if p := sshProblem(sshNodeSet(fits)); p != "" {
		t.Fatalf("an sshd_config of exactly 1 MiB refused: %s", p)
	}
	p := sshProblem(sshNodeSet(fits + "y"))
	if !strings.Contains(p, "1048577 bytes") || len(p) > 200 {
		t.Fatalf("one byte too many: %.300q", p)
	}
	for _, ref := range []corev1.SecretKeySelector{{Key: "sssd.conf"}, {LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}}} {
		ns := sshNodeSet("")
		ns.Spec.SSH.SssdConfRef = ref
		if p := sshProblem(ns); !strings.Contains(p, "sssdConfRef") {
			t.Errorf("%+v: problem %q", ref, p)
		}
	}
}

// TestAddSSHLeavesTemplateAlone: what the template says already (a volume
// of that name, a mount of that path, a port 22) wins, as with the
// logfile sidecar; nothing is added twice.
func TestAddSSHLeavesTemplateAlone(t *testing.T) {
	ns := sshNodeSet("")
	ns.Spec.Template.PodSpec.Volumes = []corev1.Volume{{Name: sshConfigVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	ns.Spec.Slurmd.Ports = []corev1.ContainerPort{{Name: "sshd", ContainerPort: 22}}
	ns.Spec.Slurmd.VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: sssdConfPath}}
	pod := newPod(ns, nil, 0, "h")
	var vols []string
	for _, v := range pod.Spec.Volumes {
		vols = append(vols, v.Name)
	}
	if strings.Join(vols, ",") != "ssh-config,sssd-conf" || pod.Spec.Volumes[0].EmptyDir == nil {
		t.Fatalf("volumes %v", pod.Spec.Volumes)
	}
	c := pod.Spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].Name != "sshd" {
		t.Fatalf("ports %v", c.Ports)
	}
	if len(c.VolumeMounts) != 2 || c.VolumeMounts[0].Name != "mine" || c.VolumeMounts[1].MountPath != sshdConfigPath {
		t.Fatalf("mounts %v", c.VolumeMounts)
	}
	if _, ok := pod.Annotations[slinkyv1beta1.AnnotationSssdConfHash]; ok {
		t.Fatalf("an sssd.conf hash without reading the Secret: %v", pod.Annotations)
	}
}

// TestKeepSSHConfig: the cache keeps the digest of a ConfigMap's
// sshd_config, never its text nor its other keys, and a second pass of
// the transform keeps the same digest.
func TestKeepSSHConfig(t *testing.T) {
	src := &corev1.ConfigMap{Data: map[string]string{sshdConfigKey: "Port 22\n", "other": strings.Repeat("x", 1000)}}
	dst := &corev1.ConfigMap{}
	keepSSHConfig(dst, src)
	if len(dst.Data) != 1 || dst.Data[sshdConfigDigestKey] != sha256Hex("Port 22\n") {
		t.Fatalf("kept %v", dst.Data)
	}
	again := &corev1.ConfigMap{}
	keepSSHConfig(again, dst)
	if len(again.Data) != 1 || again.Data[sshdConfigDigestKey] != dst.Data[sshdConfigDigestKey] {
		t.Fatalf("second pass kept %v", again.Data)
	}
	none := &corev1.ConfigMap{}
	keepSSHConfig(none, &corev1.ConfigMap{Data: map[string]string{"a": "b"}})
	if none.Data != nil {
		t.Fatalf("kept %v of a ConfigMap without sshd_config", none.Data)
	}
}
