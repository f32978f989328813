package nodeset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// requestCounter counts the requests passing through it by method and
// resource ("PATCH configmaps").
type requestCounter struct {
	next http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			c.mu.Lock()
			c.n[r.Method+" "+parts[i+2]]++
			c.mu.Unlock()
			break
		}
	}
	return c.next.RoundTrip(r)
}

func (c *requestCounter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sshdConfigOf is the sshd_config Slinky's operator writes for an
// extraSshdConfig.
func sshdConfigOf(extra string) string {
	return "#\n### GENERAL ###\nInclude /etc/ssh/sshd_config.d/*.conf\nUsePAM yes\nSubsystem sftp internal-sftp\n" +
		"AuthenticationMethods publickey password\n#\n### EXTRA CONFIG ###\n" + extra + "\n"
}

// TestSSH: spec.ssh as Slinky's operator renders it. Before anything is
// made, an sssdConfRef without key, then a ConfigMap of the name the
// NodeSet's would have ("<nodeset>-ssh-config") that someone else made,
// hold the NodeSet: no pod is made, SSHConfigReady is False with a Warning
// event, and the foreign ConfigMap is left exactly as it was. Once it is
// gone the NodeSet's own is made: the operator's sshd_config, the
// NodeSet's labels and annotations with the worker labels, the NodeSet as
// controller; pods mount it and the sssd.conf Secret key (a Secret that
// does not exist: serve never reads it, a kubelet would wait for it),
// expose port ssh and carry the hash of what they mount. The ConfigMap is
// not written again while it is as wanted, is put back when edited, and a
// new extraSshdConfig rewrites it and rolls the pods onto the new hash;
// made immutable, it holds the pods until it is deleted and made anew.
// An extraSshdConfig larger than a ConfigMap holds replaces no pod; ssh
// turned off rolls the pods to ones without it.
func TestSSH(t *testing.T) {
	e := startWithoutController(t, "ssh", 2)
	// What the controller asks of ConfigMaps and Secrets, counted.
	calls := &requestCounter{n: map[string]int{}}
	ccfg := rest.CopyConfig(cp.AdminConfig())
	ccfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { calls.next = rt; return calls })
	e.runControllerWith(controllerOptions{events: true, kube: kubernetes.NewForConfigOrDie(ccfg)})
	name, cmName := "ssh", "ssh-ssh-config"
	configMaps := e.Kube.CoreV1().ConfigMaps(e.NS)
	foreign, err := configMaps.Create(e.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cmName},
		Data: map[string]string{"sshd_config": "PermitRootLogin yes\nAuthenticationMethods none\n"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := e.NewNodeSet(name, 2, func(ns *slinkyv1beta1.NodeSet) {
		ns.Labels = map[string]string{"site": "a"}
		ns.Annotations = map[string]string{"note": "x"}
		ns.Spec.SSH = &slinkyv1beta1.NodeSetSSH{Enabled: true, ExtraSshdConfig: "LoginGraceTime 600",
			SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}}}
	})
	sshCondition := func(status metav1.ConditionStatus, reason string) {
		t.Helper()
		e.Eventually("SSHConfigReady "+string(status)+" "+reason, func() (bool, string) {
			c := e.condition(name, "SSHConfigReady")
			return c != nil && c.Status == status && c.Reason == reason, fmt.Sprint(c)
		})
	}
	noPods := func(what string) {
		t.Helper()
		// Several syncs (resync is a second).
		time.Sleep(3 * time.Second)
		if p := e.Pods(); len(p) != 0 {
			t.Fatalf("%s: pods %s made", what, names(p))
		}
	}
	sshCondition(metav1.ConditionFalse, "InvalidSSH")
	if c := e.condition(name, "SSHConfigReady"); !strings.Contains(c.Message, "sssdConfRef") {
		t.Fatalf("condition %+v", c)
	}
	noPods("sssdConfRef without key")

	e.PatchNodeSet(name, `{"spec":{"ssh":{"sssdConfRef":{"name":"sssd","key":"sssd.conf"}}}}`)
	sshCondition(metav1.ConditionFalse, "NameTaken")
	e.Eventually("Warning event", func() (bool, string) {
		ev := e.events(name, "ConfigMapNameTaken")
		return len(ev) > 0 && strings.Contains(ev[0], "not controlled by this NodeSet"), fmt.Sprint(ev)
	})
	noPods("foreign ConfigMap")
	got, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != foreign.ResourceVersion || len(got.OwnerReferences) != 0 || len(got.Labels) != 0 {
		t.Fatalf("the foreign ConfigMap was changed: %+v", got)
	}
	if err := configMaps.Delete(e.Ctx, cmName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	e.Eventually("two pods", func() (bool, string) { return len(e.Pods()) == 2, names(e.Pods()) })
	sshCondition(metav1.ConditionTrue, "Owned")
	cm, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(cm, ns) || cm.UID == foreign.UID {
		t.Fatalf("ConfigMap owners %+v", cm.OwnerReferences)
	}
	if len(cm.Data) != 1 || cm.Data["sshd_config"] != sshdConfigOf("LoginGraceTime 600") || cm.Immutable == nil || *cm.Immutable {
		t.Fatalf("ConfigMap data %q immutable %v", cm.Data, cm.Immutable)
	}
	for k, v := range map[string]string{"site": "a", slinkyv1beta1.LabelAppName: "slurmd", slinkyv1beta1.LabelAppInstance: name,
		slinkyv1beta1.LabelAppComponent: "worker", slinkyv1beta1.LabelCluster: "slurm"} {
		if cm.Labels[k] != v {
			t.Errorf("ConfigMap label %s=%q, want %q", k, cm.Labels[k], v)
		}
	}
	if cm.Annotations["note"] != "x" {
		t.Errorf("ConfigMap annotations %v", cm.Annotations)
	}
	checkSSHPod := func(p *corev1.Pod, extra string) {
		t.Helper()
		if h := p.Annotations[slinkyv1beta1.AnnotationSshdConfHash]; h != sha256Hex(sshdConfigOf(extra)) {
			t.Fatalf("%s: sshd-conf-hash %q", p.Name, h)
		}
		if _, ok := p.Annotations[slinkyv1beta1.AnnotationSssdConfHash]; ok {
			t.Fatalf("%s: an sssd.conf hash, yet serve never reads the Secret", p.Name)
		}
		vols := map[string]corev1.Volume{}
		for _, v := range p.Spec.Volumes {
			vols[v.Name] = v
		}
		sc, ss := vols["ssh-config"].Projected, vols["sssd-conf"].Projected
		if sc == nil || *sc.DefaultMode != 0o600 || len(sc.Sources) != 1 || sc.Sources[0].ConfigMap == nil ||
			sc.Sources[0].ConfigMap.Name != cmName || len(sc.Sources[0].ConfigMap.Items) != 1 ||
			sc.Sources[0].ConfigMap.Items[0] != (corev1.KeyToPath{Key: "sshd_config", Path: "sshd_config", Mode: sc.Sources[0].ConfigMap.Items[0].Mode}) ||
			*sc.Sources[0].ConfigMap.Items[0].Mode != 0o600 {
			t.Fatalf("%s: ssh-config volume %+v", p.Name, vols["ssh-config"])
		}
		if ss == nil || *ss.DefaultMode != 0o600 || len(ss.Sources) != 1 || ss.Sources[0].Secret == nil ||
			ss.Sources[0].Secret.Name != "sssd" || len(ss.Sources[0].Secret.Items) != 1 ||
			ss.Sources[0].Secret.Items[0].Key != "sssd.conf" || ss.Sources[0].Secret.Items[0].Path != "sssd.conf" ||
			*ss.Sources[0].Secret.Items[0].Mode != 0o600 {
			t.Fatalf("%s: sssd-conf volume %+v", p.Name, vols["sssd-conf"])
		}
		c := p.Spec.Containers[0]
		mounts := map[string]corev1.VolumeMount{}
		for _, m := range c.VolumeMounts {
			mounts[m.Name] = m
		}
		if m := mounts["ssh-config"]; c.Name != "slurmd" || !reflect.DeepEqual(m, corev1.VolumeMount{Name: "ssh-config", MountPath: "/etc/ssh/sshd_config", SubPath: "sshd_config", ReadOnly: true}) {
			t.Fatalf("%s: %s mounts %+v", p.Name, c.Name, c.VolumeMounts)
		}
		if m := mounts["sssd-conf"]; !reflect.DeepEqual(m, corev1.VolumeMount{Name: "sssd-conf", MountPath: "/etc/sssd/sssd.conf", SubPath: "sssd.conf", ReadOnly: true}) {
			t.Fatalf("%s: mounts %+v", p.Name, c.VolumeMounts)
		}
		found := false
		for _, port := range c.Ports {
			found = found || port == (corev1.ContainerPort{Name: "ssh", ContainerPort: 22, Protocol: corev1.ProtocolTCP})
		}
		if !found {
			t.Fatalf("%s: ports %+v", p.Name, c.Ports)
		}
	}
	for _, p := range e.Pods() {
		checkSSHPod(p, "LoginGraceTime 600")
	}
	if c := e.condition(name, "SpecSupported"); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("SpecSupported %+v", c)
	}
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })

	// As wanted: not written again, sync after sync.
	writes := calls.get("PATCH configmaps") + calls.get("PUT configmaps") + calls.get("POST configmaps")
	time.Sleep(3 * time.Second)
	if again, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{}); err != nil || again.ResourceVersion != cm.ResourceVersion {
		t.Fatalf("ConfigMap written again while as wanted: %v %s -> %s", err, cm.ResourceVersion, again.ResourceVersion)
	}
	if w := calls.get("PATCH configmaps") + calls.get("PUT configmaps") + calls.get("POST configmaps"); w != writes {
		t.Fatalf("%d ConfigMap writes while it was as wanted", w-writes)
	}
	// Edited by hand: put back.
	if _, err := configMaps.Patch(e.Ctx, cmName, types.MergePatchType, []byte(`{"data":{"sshd_config":"PermitRootLogin yes\n"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("edited ConfigMap put back", func() (bool, string) {
		cm, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{})
		return err == nil && cm.Data["sshd_config"] == sshdConfigOf("LoginGraceTime 600"), fmt.Sprint(err, cm.Data)
	})

	uids := map[string]types.UID{}
	for n, p := range e.Pods() {
		uids[n] = p.UID
	}
	e.PatchNodeSet(name, `{"spec":{"ssh":{"extraSshdConfig":"LoginGraceTime 30"}}}`)
	e.Eventually("ConfigMap rewritten", func() (bool, string) {
		got, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{})
		return err == nil && got.UID == cm.UID && got.Data["sshd_config"] == sshdConfigOf("LoginGraceTime 30"), fmt.Sprint(err, got.Data)
	})
	e.Eventually("pods rolled onto the new sshd_config", func() (bool, string) {
		e.MarkAllReady()
		pods := e.Pods()
		rolled := 0
		for n, p := range pods {
			if p.UID != uids[n] && p.Annotations[slinkyv1beta1.AnnotationSshdConfHash] == sha256Hex(sshdConfigOf("LoginGraceTime 30")) {
				rolled++
			}
		}
		return len(pods) == 2 && rolled == 2, names(pods)
	})
	for _, p := range e.Pods() {
		checkSSHPod(p, "LoginGraceTime 30")
		uids[p.Name] = p.UID
	}
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })

	// Made immutable by someone: it cannot be rewritten; said, and no pod
	// is replaced until it is deleted, when it is made anew.
	if _, err := configMaps.Patch(e.Ctx, cmName, types.MergePatchType, []byte(`{"immutable":true}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.PatchNodeSet(name, `{"spec":{"ssh":{"extraSshdConfig":"LoginGraceTime 31"}}}`)
	sshCondition(metav1.ConditionFalse, "Immutable")
	time.Sleep(3 * time.Second)
	for n, p := range e.Pods() {
		if p.UID != uids[n] || p.Annotations[slinkyv1beta1.AnnotationPodCordon] != "" {
			t.Fatalf("%s replaced or cordoned while the ConfigMap cannot be rewritten", n)
		}
	}
	if err := configMaps.Delete(e.Ctx, cmName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("pods rolled onto the ConfigMap made anew", func() (bool, string) {
		e.MarkAllReady()
		pods := e.Pods()
		rolled := 0
		for n, p := range pods {
			if p.UID != uids[n] && p.Annotations[slinkyv1beta1.AnnotationSshdConfHash] == sha256Hex(sshdConfigOf("LoginGraceTime 31")) {
				rolled++
			}
		}
		got, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{})
		return len(pods) == 2 && rolled == 2 && err == nil && got.UID != cm.UID && got.Data["sshd_config"] == sshdConfigOf("LoginGraceTime 31"),
			fmt.Sprint(names(pods), err)
	})
	for _, p := range e.Pods() {
		uids[p.Name] = p.UID
	}
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })

	// The worst extraSshdConfig: more than a ConfigMap holds. Said, short;
	// no pod is replaced, the ConfigMap keeps what it held.
	huge := strings.Repeat("#", corev1.MaxSecretSize)
	e.PatchNodeSet(name, `{"spec":{"ssh":{"extraSshdConfig":"`+huge+`"}}}`)
	sshCondition(metav1.ConditionFalse, "InvalidSSH")
	if c := e.condition(name, "SSHConfigReady"); len(c.Message) > 300 || !strings.Contains(c.Message, "more than a ConfigMap holds") {
		t.Fatalf("condition message of %d bytes: %.300s", len(c.Message), c.Message)
	}
	time.Sleep(3 * time.Second)
	for n, p := range e.Pods() {
		if p.UID != uids[n] || p.Annotations[slinkyv1beta1.AnnotationPodCordon] != "" {
			t.Fatalf("%s replaced or cordoned while the sshd_config cannot be written", n)
		}
	}
	if got, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{}); err != nil || got.Data["sshd_config"] != sshdConfigOf("LoginGraceTime 31") {
		t.Fatalf("ConfigMap: %v %.100q", err, got.Data)
	}

	// ssh off: the pods roll to ones without it, their hashes those of
	// nothing (as the operator's pods without ssh); the ConfigMap stays.
	e.PatchNodeSet(name, `{"spec":{"ssh":{"enabled":false,"extraSshdConfig":null}}}`)
	empty := sha256Hex("")
	e.Eventually("pods without ssh", func() (bool, string) {
		e.MarkAllReady()
		pods := e.Pods()
		plain := 0
		for _, p := range pods {
			ssh := false
			for _, v := range p.Spec.Volumes {
				ssh = ssh || v.Name == "ssh-config" || v.Name == "sssd-conf"
			}
			for _, port := range p.Spec.Containers[0].Ports {
				ssh = ssh || port.Name == "ssh"
			}
			if p.Annotations[slinkyv1beta1.AnnotationSshdConfHash] == empty && p.Annotations[slinkyv1beta1.AnnotationSssdConfHash] == empty && !ssh {
				plain++
			}
		}
		return len(pods) == 2 && plain == 2, names(pods)
	})
	sshCondition(metav1.ConditionTrue, "SSHOff")
	// The sssd.conf Secret is never read (nor any other).
	if n := calls.get("GET secrets"); n != 0 {
		t.Fatalf("%d Secret reads", n)
	}
	if _, err := configMaps.Get(e.Ctx, cmName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Fatal("ConfigMap deleted with ssh off")
	}
}

// TestSSHDaemonSetMode: in DaemonSet mode too, a foreign ConfigMap of the
// ssh-config name holds the pods (none is made for a matching node) until
// it is gone; then the node's pod mounts the NodeSet's own.
func TestSSHDaemonSetMode(t *testing.T) {
	e := startWithoutController(t, "sshd", 1)
	e.runControllerWith(controllerOptions{})
	sel := map[string]string{"kubectl-vc.test/pool": e.NS}
	e.newDaemonNode("sshd-0."+e.NS, sel, nil)
	configMaps := e.Kube.CoreV1().ConfigMaps(e.NS)
	if _, err := configMaps.Create(e.Ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sshd-ssh-config"},
		Data: map[string]string{"sshd_config": "PermitRootLogin yes\n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := e.NewNodeSet("sshd", 1, func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.ScalingMode = slinkyv1beta1.ScalingModeDaemonSet
		ns.Spec.Template.PodSpec.NodeSelector = sel
		ns.Spec.SSH = &slinkyv1beta1.NodeSetSSH{Enabled: true,
			SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sssd"}, Key: "sssd.conf"}}
	})
	e.Eventually("SSHConfigReady False NameTaken", func() (bool, string) {
		c := e.condition("sshd", "SSHConfigReady")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "NameTaken", fmt.Sprint(c)
	})
	time.Sleep(3 * time.Second)
	if p := e.Pods(); len(p) != 0 {
		t.Fatalf("pods %s made while the ConfigMap is not the NodeSet's", names(p))
	}
	if err := configMaps.Delete(e.Ctx, "sshd-ssh-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the node's pod, mounting the NodeSet's ConfigMap", func() (bool, string) {
		cm, err := configMaps.Get(e.Ctx, "sshd-ssh-config", metav1.GetOptions{})
		pods := e.Pods()
		for _, p := range pods {
			for _, v := range p.Spec.Volumes {
				if v.Name == "ssh-config" && err == nil && metav1.IsControlledBy(cm, ns) && len(pods) == 1 {
					return true, ""
				}
			}
		}
		return false, fmt.Sprint(names(pods), err)
	})
}

// TestSSHTakeOver: a NodeSet taken over from Slinky's operator finds the
// ConfigMap the operator made (controlled by the NodeSet, the same
// sshd_config, labels and annotations) and leaves it unwritten: its pods
// are made and SSHConfigReady is True with no ConfigMap write at all.
func TestSSHTakeOver(t *testing.T) {
	e := startWithoutController(t, "ssht", 1)
	ns := e.NewNodeSet("ssht", 1, func(ns *slinkyv1beta1.NodeSet) {
		ns.Labels = map[string]string{"site": "b"}
		ns.Annotations = map[string]string{"note": "y"}
		ns.Spec.SSH = &slinkyv1beta1.NodeSetSSH{Enabled: true, ExtraSshdConfig: "MaxSessions 4",
			SssdConfRef: corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-sssd-conf"}, Key: "sssd.conf"}}
	})
	immutable := false
	operators, err := e.Kube.CoreV1().ConfigMaps(e.NS).Create(e.Ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "ssht-ssh-config", Annotations: map[string]string{"note": "y"},
			Labels: map[string]string{"site": "b", slinkyv1beta1.LabelAppName: "slurmd", slinkyv1beta1.LabelAppInstance: "ssht",
				slinkyv1beta1.LabelAppComponent: "worker", slinkyv1beta1.LabelCluster: "slurm"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ns, slinkyv1beta1.SchemeGroupVersion.WithKind("NodeSet"))}},
		Data:      map[string]string{"sshd_config": sshdConfigOf("MaxSessions 4")},
		Immutable: &immutable,
	}, metav1.CreateOptions{FieldManager: "slurm-operator"})
	if err != nil {
		t.Fatal(err)
	}
	calls := &requestCounter{n: map[string]int{}}
	ccfg := rest.CopyConfig(cp.AdminConfig())
	ccfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { calls.next = rt; return calls })
	e.runControllerWith(controllerOptions{kube: kubernetes.NewForConfigOrDie(ccfg)})
	e.Eventually("pod made, SSHConfigReady True", func() (bool, string) {
		c := e.condition("ssht", "SSHConfigReady")
		return len(e.Pods()) == 1 && c != nil && c.Status == metav1.ConditionTrue && c.Reason == "Owned", fmt.Sprint(names(e.Pods()), c)
	})
	// serve's caches select its own label (docs/security.md): the
	// operator's ConfigMap, which has none, is found by the create of its
	// name failing, read once, and labelled; its data and owner stay. Then
	// the cache shows it, and nothing more is written.
	time.Sleep(2 * time.Second)
	if w := calls.get("PUT configmaps"); w != 0 {
		t.Errorf("%d full updates of the operator's ConfigMap", w)
	}
	if p, c := calls.get("PATCH configmaps"), calls.get("POST configmaps"); p != 1 || c != 1 {
		t.Errorf("%d creates and %d patches of the operator's ConfigMap, want one each (the create refused, the label)", c, p)
	}
	got, err := e.Kube.CoreV1().ConfigMaps(e.NS).Get(e.Ctx, "ssht-ssh-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[keys.LabelManagedBy] != keys.ServeName || got.Data["sshd_config"] != operators.Data["sshd_config"] ||
		!metav1.IsControlledBy(got, ns) || got.Labels["site"] != "b" {
		t.Errorf("the operator's ConfigMap after the take-over: labels %v, owners %v", got.Labels, got.OwnerReferences)
	}
	rv := got.ResourceVersion
	time.Sleep(2 * time.Second)
	if got, err := e.Kube.CoreV1().ConfigMaps(e.NS).Get(e.Ctx, "ssht-ssh-config", metav1.GetOptions{}); err != nil || got.ResourceVersion != rv {
		t.Fatalf("the ConfigMap written again once labelled: %v", err)
	}
}
