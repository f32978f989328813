package install

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// The certificate of serve's queue webhook (keys.QueueWebhookSecretName).
// The API server verifies serve against the caBundle of the
// ValidatingWebhookConfiguration, so install, which writes both, makes a
// CA of its own and a serving certificate signed by it, and keeps them in
// a Secret serve's pods mount. A second install reuses a Secret that is
// still good: rotating it would leave running pods serving a certificate
// the new caBundle does not trust until the kubelet refreshes their volume.

const (
	// webhookCertLifetime is how long a serving certificate install makes
	// is valid; the CA lives as long.
	webhookCertLifetime = 365 * 24 * time.Hour
	// webhookCertRenewBefore: install makes a new certificate when the one
	// there expires within this.
	webhookCertRenewBefore = 30 * 24 * time.Hour
)

var secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// webhookDNSNames are the names the API server dials the webhook Service
// by, which the serving certificate must hold.
func webhookDNSNames(ns string) []string {
	svc := keys.QueueWebhookServiceName + "." + ns + ".svc"
	return []string{svc, svc + ".cluster.local"}
}

// webhookCert is the PEM of a CA, and of a serving certificate and its key
// signed by it.
type webhookCert struct {
	CA, Cert, Key []byte
}

// newWebhookCert makes a CA (ECDSA P-256) and a serving certificate for
// the webhook Service in ns, both valid from a minute before now (clocks
// differ a little) for webhookCertLifetime.
func newWebhookCert(ns string, now time.Time) (*webhookCert, error) {
	ca, cert, key, err := NewWebhookCertificate(now, webhookDNSNames(ns)...)
	if err != nil {
		return nil, err
	}
	return &webhookCert{CA: ca, Cert: cert, Key: key}, nil
}

// NewWebhookCertificate makes a CA (ECDSA P-256) and a serving certificate
// signed by it for hosts (DNS names or IP addresses, the first its common
// name), both valid from a minute before now for a year, in PEM: what
// install keeps in serve's webhook Secret, and what a serve outside the
// cluster may be given (--webhook-cert-dir, with the CA for install's
// --webhook-ca-file).
func NewWebhookCertificate(now time.Time, hosts ...string) (ca, cert, key []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	notBefore, notAfter := now.Add(-time.Minute), now.Add(webhookCertLifetime)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kubectl-vc serve webhook CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if len(hosts) > 0 {
		leaf.Subject = pkix.Name{CommonName: hosts[0]}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// problem says why c cannot serve the webhook Service in ns at now and
// for webhookCertRenewBefore, or "" when it can: the key pair matches, the
// certificate chains to the CA and names the Service.
func (c *webhookCert) problem(ns string, now time.Time) string {
	pair, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		return "tls.crt and tls.key are not a key pair (" + err.Error() + ")"
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return "tls.crt does not parse"
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.CA) {
		return "ca.crt holds no PEM certificate"
	}
	for _, name := range webhookDNSNames(ns) {
		if !slices.Contains(leaf.DNSNames, name) {
			return "its certificate does not name " + name
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return "its certificate does not verify against ca.crt (" + err.Error() + ")"
	}
	if leaf.NotAfter.Before(now.Add(webhookCertRenewBefore)) {
		return "its certificate expires at " + leaf.NotAfter.UTC().Format(time.RFC3339)
	}
	return ""
}

// webhookSecret is the Secret of the webhook's certificate as install
// found or made it.
type webhookSecret struct {
	ns   string
	cert *webhookCert
	// why is why a new certificate was made ("" when the Secret there is
	// reused), and exists whether a Secret of that name is there.
	why string
	cur *unstructured.Unstructured
}

// readWebhookSecret reads the Secret in ns and returns it when it serves
// (problem), else a new certificate to write (write).
func readWebhookSecret(ctx context.Context, dyn dynamic.Interface, ns string, now time.Time) (*webhookSecret, error) {
	s := &webhookSecret{ns: ns}
	cur, err := dyn.Resource(secretGVR).Namespace(ns).Get(ctx, keys.QueueWebhookSecretName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s.why = "missing"
	case err != nil:
		return nil, namedErr("read", "secret "+ns+"/"+keys.QueueWebhookSecretName, err)
	default:
		s.cur = cur
		data, _, _ := unstructured.NestedStringMap(cur.Object, "data")
		got := &webhookCert{}
		for k, dst := range map[string]*[]byte{"ca.crt": &got.CA, "tls.crt": &got.Cert, "tls.key": &got.Key} {
			*dst, _ = base64.StdEncoding.DecodeString(data[k])
		}
		if s.why = got.problem(ns, now); s.why == "" {
			s.cert = got
			return s, nil
		}
	}
	if s.cert, err = newWebhookCert(ns, now); err != nil {
		return nil, fmt.Errorf("make the queue webhook's certificate: %w", err)
	}
	return s, nil
}

// write stores a new certificate in the Secret (nothing when the one there
// is reused) and says so.
func (s *webhookSecret) write(ctx context.Context, dyn dynamic.Interface, dryRun bool, out io.Writer) error {
	what := "secret/" + keys.QueueWebhookSecretName + " (namespace " + s.ns + ")"
	if s.why == "" {
		_, err := fmt.Fprintf(out, "%s unchanged\n", what)
		return err
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": keys.QueueWebhookSecretName, "namespace": s.ns,
			"labels": map[string]any{"app.kubernetes.io/part-of": "kubectl-vc", "app.kubernetes.io/name": keys.ServeName},
		},
		"type": "kubernetes.io/tls",
		"data": map[string]any{
			"ca.crt":  base64.StdEncoding.EncodeToString(s.cert.CA),
			"tls.crt": base64.StdEncoding.EncodeToString(s.cert.Cert),
			"tls.key": base64.StdEncoding.EncodeToString(s.cert.Key),
		},
	}}
	ri := dyn.Resource(secretGVR).Namespace(s.ns)
	var dry []string
	suffix := ""
	if dryRun {
		dry, suffix = []string{metav1.DryRunAll}, " (server dry run)"
	}
	var err error
	result := "created"
	switch {
	case s.cur != nil && s.cur.Object["type"] == "kubernetes.io/tls":
		result = "configured (new certificate: " + s.why + ")"
		u.SetResourceVersion(s.cur.GetResourceVersion())
		_, err = ri.Update(ctx, u, metav1.UpdateOptions{FieldManager: keys.CLIManager, DryRun: dry})
	case s.cur != nil:
		// A Secret's type cannot change: one of another type is replaced.
		result = "replaced (" + s.why + ")"
		if err = ri.Delete(ctx, keys.QueueWebhookSecretName, metav1.DeleteOptions{DryRun: dry}); err == nil && !dryRun {
			_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: keys.CLIManager})
		}
	default:
		_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: keys.CLIManager, DryRun: dry})
		if err != nil && dryRun && namespaceNotFound(err, s.ns) {
			// As apply says of the objects in a namespace this install
			// creates: a dry run cannot check them.
			err, suffix = nil, " (server dry run; not checked: its namespace is created by this install)"
		}
	}
	if err != nil {
		return namedErr("write", what, err)
	}
	_, err = fmt.Fprintf(out, "%s %s%s\n", what, result, suffix)
	return err
}
