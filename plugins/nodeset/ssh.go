package nodeset

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

// spec.ssh, as Slinky's operator renders it: a ConfigMap
// "<nodeset>-ssh-config" holding an sshd_config (a fixed general part,
// then extraSshdConfig as written), controlled by the NodeSet; in each
// pod the volumes ssh-config (that ConfigMap) and sssd-conf (the Secret
// key sssdConfRef names), mounted read-only over /etc/ssh/sshd_config and
// /etc/sssd/sssd.conf in the slurmd container, and its port ssh (22/TCP).
// The image's sshd and sssd read them; serve runs neither.
//
// The pods name the ConfigMap, not its content: whatever holds that name
// when the kubelet mounts it is the sshd_config of privileged pods. So
// no pod of the NodeSet is created or replaced (sshHold) unless the cache
// shows the ConfigMap controlled by this NodeSet and holding what it says
// now: a ConfigMap of that name someone else made is never written,
// adopted or mounted into a new pod.
//
// serve reads no Secret but the Slurm JWT keys of trusted namespaces
// (docs/security.md), so sssd.conf is never read: its hash annotation is
// left out of the pods that mount one. (The operator reads the Secret and
// writes its SHA-256 on every pod, which lets anyone who may read pods
// test guesses of what sssd.conf holds, an LDAP bind password for one.)
const (
	sshConfigVolume = "ssh-config"
	sshdConfigKey   = "sshd_config"
	sshdConfigPath  = "/etc/ssh/" + sshdConfigKey
	sssdConfVolume  = "sssd-conf"
	sssdConfFile    = "sssd.conf"
	sssdConfPath    = "/etc/sssd/" + sssdConfFile
	sshPortName     = "ssh"
	sshPort         = 22

	// sshdConfigDigestKey holds, in the cache, the SHA-256 of a
	// ConfigMap's sshd_config instead of the text (CacheReads): a key the
	// API server never lets a ConfigMap have (':' is not allowed), so a
	// cached object cannot be mistaken for a stored one.
	sshdConfigDigestKey = "sha256:" + sshdConfigKey
)

// sshdConfigGeneral is what every worker's sshd_config starts with, line
// for line as the operator writes it (pam_slurm_adopt needs UsePAM).
const sshdConfigGeneral = `#
### GENERAL ###
Include /etc/ssh/sshd_config.d/*.conf
UsePAM yes
Subsystem sftp internal-sftp
AuthenticationMethods publickey password
#
### EXTRA CONFIG ###
`

// emptyHash is the SHA-256 of nothing: the hash annotations of a pod that
// mounts no such file, as the operator writes them when it finds none.
var emptyHash = sha256Hex("")

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func sshEnabled(ns *slinkyv1beta1.NodeSet) bool { return ns.Spec.SSH != nil && ns.Spec.SSH.Enabled }

func sshConfigName(ns *slinkyv1beta1.NodeSet) string { return ns.Name + slinkyv1beta1.SSHConfigSuffix }

// sshdConfig is the sshd_config of the NodeSet's workers.
func sshdConfig(ns *slinkyv1beta1.NodeSet) string {
	return sshdConfigGeneral + ns.Spec.SSH.ExtraSshdConfig + "\n"
}

// sshdConfigHash is the hash of the sshd_config the NodeSet's pods mount.
func sshdConfigHash(ns *slinkyv1beta1.NodeSet) string {
	if !sshEnabled(ns) {
		return emptyHash
	}
	return sha256Hex(sshdConfig(ns))
}

// sshProblem says why the NodeSet's ssh cannot be rendered ("" if it can):
// an sshd_config larger than a ConfigMap holds (extraSshdConfig has no
// bound in the schema), or an sssdConfRef naming no Secret key (a pod
// projecting key "" is refused by the API server; one projecting Secret
// "" never starts).
func sshProblem(ns *slinkyv1beta1.NodeSet) string {
	ref := ns.Spec.SSH.SssdConfRef
	switch n := len(sshdConfigGeneral) + len(ns.Spec.SSH.ExtraSshdConfig) + 1; {
	case n > corev1.MaxSecretSize:
		return fmt.Sprintf("ssh.extraSshdConfig makes an sshd_config of %d bytes, more than a ConfigMap holds (%d)", n, corev1.MaxSecretSize)
	case ref.Name == "" || ref.Key == "":
		return "ssh.sssdConfRef names no Secret key (name and key are both needed)"
	}
	return ""
}

// addSSH adds to a pod what spec.ssh asks for (see above) and the hash
// annotations. Every pod gets sshd-conf-hash, as the operator's do, so
// that a change of the sshd_config shows on the pods made since; the
// change itself rolls the pods through the update strategy, spec.ssh being
// part of the revision (history.go). What the template holds already (a
// volume of that name, a mount of that volume or path, a port 22) is
// left as it is.
func addSSH(ns *slinkyv1beta1.NodeSet, pod *corev1.Pod) {
	pod.Annotations[slinkyv1beta1.AnnotationSshdConfHash] = sshdConfigHash(ns)
	if !sshEnabled(ns) {
		pod.Annotations[slinkyv1beta1.AnnotationSssdConfHash] = emptyHash
		return
	}
	ref := ns.Spec.SSH.SssdConfRef
	projected := func(name string, src corev1.VolumeProjection) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o600), Sources: []corev1.VolumeProjection{src}}}}
	}
	for _, v := range []corev1.Volume{
		projected(sshConfigVolume, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: sshConfigName(ns)},
			Items:                []corev1.KeyToPath{{Key: sshdConfigKey, Path: sshdConfigKey, Mode: ptr.To[int32](0o600)}}}}),
		projected(sssdConfVolume, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name},
			Items:                []corev1.KeyToPath{{Key: ref.Key, Path: sssdConfFile, Mode: ptr.To[int32](0o600)}}}}),
	} {
		if !slices.ContainsFunc(pod.Spec.Volumes, func(x corev1.Volume) bool { return x.Name == v.Name }) {
			pod.Spec.Volumes = append(pod.Spec.Volumes, v)
		}
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == slurmdName(ns) })
	if i < 0 {
		return
	}
	c := &pod.Spec.Containers[i]
	addMount(c, corev1.VolumeMount{Name: sshConfigVolume, MountPath: sshdConfigPath, SubPath: sshdConfigKey, ReadOnly: true})
	addMount(c, corev1.VolumeMount{Name: sssdConfVolume, MountPath: sssdConfPath, SubPath: sssdConfFile, ReadOnly: true})
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == sshPortName || p.ContainerPort == sshPort }) {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: sshPortName, ContainerPort: sshPort, Protocol: corev1.ProtocolTCP})
	}
}

// keepSSHConfig is the ConfigMap cache's reader (CacheReads): of a
// ConfigMap it keeps, besides the metadata, whether it is immutable and
// the SHA-256 of its sshd_config, never the text. Any namespace may hold
// any number of ConfigMaps of up to 1 MiB each; the cache holds a few
// dozen bytes of each. A second pass (an informer may transform an object
// twice) finds the digest and keeps it.
func keepSSHConfig(dst, src *corev1.ConfigMap) {
	dst.Immutable = src.Immutable
	if ref := metav1.GetControllerOfNoCopy(src); ref == nil || ref.Kind != slinkyv1beta1.NodeSetKind.Kind ||
		src.Name != ref.Name+slinkyv1beta1.SSHConfigSuffix {
		// No NodeSet's ssh config: only its name is read (to tell that
		// it is no NodeSet's).
		dst.Labels, dst.Annotations = nil, nil
	}
	if d := sshdConfigDigest(src); d != "" {
		dst.Data = map[string]string{sshdConfigDigestKey: d}
	}
}

// sshdConfigDigest is the digest keepSSHConfig kept of cm's sshd_config
// ("" if it has none); computed here from a ConfigMap read past the cache.
func sshdConfigDigest(cm *corev1.ConfigMap) string {
	if d, ok := cm.Data[sshdConfigDigestKey]; ok {
		return d
	}
	if v, ok := cm.Data[sshdConfigKey]; ok {
		return sha256Hex(v)
	}
	return ""
}

// sshConfigLabels are the ConfigMap's labels, as the operator's: the
// NodeSet's own, then the worker labels; and serve's (owned.go).
func sshConfigLabels(ns *slinkyv1beta1.NodeSet) map[string]string {
	l := maps.Clone(ns.Labels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, selectorLabels(ns))
	l[slinkyv1beta1.LabelAppComponent] = slinkyv1beta1.AppComponent
	l[slinkyv1beta1.LabelCluster] = ns.Spec.ControllerRef.Name
	return owned(l)
}

// sshConfigAnnotations are the NodeSet's annotations but kubectl's
// last-applied configuration, which describes the NodeSet.
func sshConfigAnnotations(ns *slinkyv1beta1.NodeSet) map[string]string {
	a := maps.Clone(ns.Annotations)
	delete(a, corev1.LastAppliedConfigAnnotation)
	return a
}

// containsAll says whether m holds every entry of want.
func containsAll(m, want map[string]string) bool {
	for k, v := range want {
		if x, ok := m[k]; !ok || x != v {
			return false
		}
	}
	return true
}

// syncSSHConfig keeps the ConfigMap of the NodeSet's sshd_config, created
// or brought up to date only when it differs, and decides sshHold. With
// ssh off nothing is written: a ConfigMap made while it was on stays (as
// the operator leaves it) until the NodeSet goes, and no pod mounts it.
func (s *nodeSetSync) syncSSHConfig(ctx context.Context) error {
	ns := s.set
	if !sshEnabled(ns) {
		s.setCondition(conditions.SSHConfigReady, true, "SSHOff", "ssh is not enabled: pods mount no sshd_config")
		return nil
	}
	// Until the cache shows the ConfigMap as wanted.
	s.sshHold = true
	const held = "no pod of this NodeSet is created or replaced until then"
	if p := sshProblem(ns); p != "" {
		s.setFalseWithWarning(conditions.SSHConfigReady, "InvalidSSH", "InvalidSSH", p+": "+held)
		return nil
	}
	name, want := sshConfigName(ns), sshdConfig(ns)
	labels, annotations := sshConfigLabels(ns), sshConfigAnnotations(ns)
	cur, err := s.c.configMaps.ConfigMaps(ns.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Namespace, Labels: labels, Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.NodeSetKind)}},
			Data:      map[string]string{sshdConfigKey: want},
			Immutable: ptr.To(false),
		}
		// Create, not apply: a ConfigMap made since the cache was read
		// fails it rather than being taken over. Created, the cache's
		// event syncs the NodeSet again.
		_, err = s.c.kube.CoreV1().ConfigMaps(ns.Namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: FieldManager})
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		// One the cache cannot show, without serve's label (owned.go):
		// read once, decided on below (labelled if it is ours).
		cur, err = s.c.kube.CoreV1().ConfigMaps(ns.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	switch {
	case err != nil:
		return err
	case !metav1.IsControlledBy(cur, ns):
		s.setFalseWithWarning(conditions.SSHConfigReady, "NameTaken", "ConfigMapNameTaken", fmt.Sprintf(
			"ConfigMap %s/%s exists and is not controlled by this NodeSet; it is left alone, and no pod of this NodeSet "+
				"is created or replaced until it is gone: each would mount it as its sshd_config", ns.Namespace, name))
		return nil
	case cur.DeletionTimestamp != nil:
		// Its deletion's event syncs again; then it is made anew.
		return nil
	case sshdConfigDigest(cur) == sha256Hex(want) && containsAll(cur.Labels, labels) && containsAll(cur.Annotations, annotations):
		s.sshHold = false
		s.setCondition(conditions.SSHConfigReady, true, "Owned", "ConfigMap "+name+" holds the workers' sshd_config")
		return nil
	case ptr.Deref(cur.Immutable, false):
		s.setFalseWithWarning(conditions.SSHConfigReady, "Immutable", "ConfigMapImmutable", fmt.Sprintf(
			"ConfigMap %s/%s is immutable and does not hold what spec.ssh says: delete it to have it made anew; %s", ns.Namespace, name, held))
		return nil
	}
	// The resourceVersion the cache showed is a precondition: a ConfigMap
	// deleted and made by someone else since is refused, never taken
	// over. Labels and annotations of others stay (as the operator merges
	// them); the data is ours.
	ac := corev1ac.ConfigMap(name, ns.Namespace).
		WithResourceVersion(cur.ResourceVersion).
		WithLabels(labels).
		WithAnnotations(annotations).
		WithOwnerReferences(ownerRefAC(ns)).
		WithData(map[string]string{sshdConfigKey: want})
	_, err = s.c.kube.CoreV1().ConfigMaps(ns.Namespace).Apply(ctx, ac, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if apierrors.IsConflict(err) {
		return nil // changed meanwhile: its event syncs again
	}
	return err
}
