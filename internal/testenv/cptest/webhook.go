package cptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// Webhook is where a serve started by a test answers its admission
// webhook: a free loopback address, and a certificate for it signed by a
// CA made for the test, which install's --webhook-url and
// --webhook-ca-file are given.
type Webhook struct {
	// Addr is the listen address (serve's --webhook-bind-address).
	Addr string
	// URL is the queue webhook's URL at Addr.
	URL string
	// CertDir holds tls.crt and tls.key (serve's --webhook-cert-dir).
	CertDir string
	// CA is the CA's certificate in PEM (install's --webhook-ca-file).
	CA []byte
}

// NewWebhook picks the address and writes the certificate into dir.
func NewWebhook(dir string) (*Webhook, error) {
	port, err := freeport.Port("127.0.0.1")
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubectl-vc test webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "webhook-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return &Webhook{Addr: addr, URL: "https://" + addr + keys.QueueWebhookPath, CertDir: certDir,
		CA: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}, nil
}
