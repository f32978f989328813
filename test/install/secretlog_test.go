package install

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// TestNoSecretBytesInTheLog (issue 42, Deliver 5): serve at -v=10, the
// most client-go logs (at 8 and above it logs every response body, a
// Secret's with it), follows a NodeSet to its Slinky Controller and reads
// the JWT key Secret that Controller names. Neither the key, nor its
// base64 (a JSON body), nor its hex (client-go hex-dumps a body it cannot
// print, a protobuf one) is anywhere in serve's log; the GET of the
// Secret is, and other bodies are, so the log was detailed enough to have
// held it.
func TestNoSecretBytesInTheLog(t *testing.T) {
	kube := kube(t)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	// Before serve starts, so that its NodeSet controller follows the
	// Controller and RestApi from the start (as TestServeInCluster does).
	if err := cptest.InstallSlinkyOperatorCRDs(ctx, cp); err != nil {
		t.Fatal(err)
	}
	nsObj, err := kube.CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "secret-log-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })

	key := make([]byte, 64)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	slinkyObjects(t, kube, vc, ns, key)

	s := cptest.StartServe(t, binary, kubeconfig, "--controllers=nodeset", "--leader-elect=false", "-v=10",
		// The namespace trusted with its Slurm key (docs/security.md).
		"--slurm-namespaces="+ns)
	secretURL := "/api/v1/namespaces/" + ns + "/secrets/slurm-jwt"
	eventually(t, "serve read the key Secret (its GET in the log) and went past it", func() (bool, error) {
		log, err := os.ReadFile(s.Log)
		if err != nil {
			return false, err
		}
		read := bytes.Contains(log, []byte(secretURL))
		set, err := vc.SlinkyV1beta1().NodeSets(ns).Get(ctx, "compute", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// Past the Secret: found and read, whatever Slurm then answered
		// (nothing routes to the Service's cluster IP here).
		past := false
		for _, c := range set.Status.Conditions {
			past = past || (c.Type == "SlurmReachable" && c.Reason != "" && !strings.Contains(c.Message, "Secret"))
		}
		return read && past, nil
	})
	log, err := os.ReadFile(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	for what, leak := range secretForms(key) {
		if i := bytes.Index(log, leak); i >= 0 {
			lo := max(0, i-300)
			t.Errorf("the key's %s is in serve's log at byte %d:\n%s", what, i, log[lo:min(len(log), i+len(leak)+100)])
		}
	}
	dumped := hexDumped(log)
	if len(dumped) == 0 {
		t.Fatal("no hex dump in serve's log at -v=10: the log's protobuf bodies are no longer dumped, and the check below would prove nothing")
	}
	if bytes.Contains(dumped, key[:12]) {
		t.Errorf("the key is in a hex dump of a response body in serve's log")
	}
}

// secretForms are the shapes a key takes in a log: raw, base64 (a JSON
// Secret) and hex. Pieces of 12 bytes are looked for.
func secretForms(key []byte) map[string][]byte {
	return map[string][]byte{
		"raw bytes": key[:12],
		"base64":    []byte(base64.StdEncoding.EncodeToString(key)[:16]),
		"hex":       []byte(hex.EncodeToString(key[:12])),
	}
}

// dumpLine is a line of hex.Dump, which client-go logs for a body it
// cannot print (a protobuf one): offset, up to 16 bytes in hex (a double
// space after the eighth), their characters.
var dumpLine = regexp.MustCompile(`^\s*[0-9a-f]{8}  ((?:[0-9a-f]{2} {1,2})+)`)

// hexDumped is every byte that the log's hex dumps show, joined: a key
// split over two lines of a dump is whole again there.
func hexDumped(log []byte) []byte {
	var out []byte
	for _, l := range strings.Split(string(log), "\n") {
		m := dumpLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(m[1]), ""))
		if err == nil {
			out = append(out, b...)
		}
	}
	return out
}

// slinkyObjects makes in ns what a NodeSet under Slinky has: the JWT key
// Secret, the Controller naming it, a RestApi of that Controller and its
// Service, and the NodeSet compute (no replicas).
func slinkyObjects(t *testing.T, kube kubernetes.Interface, vc versioned.Interface, ns string, key []byte) {
	t.Helper()
	if _, err := kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm-jwt", Labels: map[string]string{"kubectl-vc.io/slurm-jwt-key": "true"}},
		Data:       map[string][]byte{"jwt.key": key},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vc.SlinkyV1beta1().Controllers(ns).Create(ctx, &slinkyv1beta1.Controller{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm"},
		Spec: slinkyv1beta1.ControllerSpec{
			JwtKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-jwt"}, Key: "jwt.key"},
			// Required by the CRD; serve never reads it.
			SlurmKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "slurm-key"}, Key: "slurm.key"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vc.SlinkyV1beta1().RestApis(ns).Create(ctx, &slinkyv1beta1.RestApi{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm"},
		Spec:       slinkyv1beta1.RestApiSpec{ControllerRef: corev1.LocalObjectReference{Name: "slurm"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "slurm" + slinkyv1beta1.RestApiServiceSuffix},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "slurmrestd", Port: slinkyv1beta1.SlurmrestdPort}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vc.SlinkyV1beta1().NodeSets(ns).Create(ctx, &slinkyv1beta1.NodeSet{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec: slinkyv1beta1.NodeSetSpec{
			ControllerRef: corev1.LocalObjectReference{Name: "slurm"},
			Replicas:      ptr.To[int32](0),
			Slurmd:        corev1.Container{Name: "slurmd", Image: "ghcr.io/slinkyproject/slurmd:25.05"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
