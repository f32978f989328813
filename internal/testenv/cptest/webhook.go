package cptest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
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
	ca, cert, key, err := install.NewWebhookCertificate(time.Now(), "127.0.0.1")
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "webhook-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), cert, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), key, 0o600); err != nil {
		return nil, err
	}
	return &Webhook{Addr: addr, URL: "https://" + addr + keys.QueueWebhookPath, CertDir: certDir,
		CA: ca}, nil
}
