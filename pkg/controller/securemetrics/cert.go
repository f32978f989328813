package securemetrics

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"k8s.io/klog/v2"
)

// The file names in --metrics-cert-dir: those of a kubernetes.io/tls
// Secret, as cert-manager writes it, mounted as a volume.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Certs serves the certificate of the metrics endpoint: the pair in a
// directory, read again when the files change, or one made at start.
type Certs struct {
	dir string
	// flag names the directory's flag, and what the endpoint, in errors
	// and the log.
	flag, what string
	mu         sync.RWMutex
	cert       *tls.Certificate
	// crt and key are the bytes last loaded, to see a change.
	crt, key []byte
}

// LoadDir reads the pair in dir (--metrics-cert-dir); Watch keeps it
// current.
func LoadDir(dir string) (*Certs, error) { return LoadFlagDir("--metrics-cert-dir", "metrics", dir) }

// LoadFlagDir is LoadDir for another endpoint: what names it, flag its
// directory's flag, in errors and the log.
func LoadFlagDir(flag, what, dir string) (*Certs, error) {
	c := &Certs{dir: dir, flag: flag, what: what}
	changed, err := c.reload()
	if err != nil {
		return nil, err
	}
	if !changed {
		return nil, errors.New("no certificate loaded")
	}
	return c, nil
}

// SelfSigned makes a certificate for hosts (names or IP addresses), valid
// for a year, with a fresh ECDSA P-256 key (milliseconds to make, where
// RSA takes a noticeable part of a second). Scrapers then verify nothing
// but the connection's encryption (insecureSkipVerify, or the pod's name
// against nothing); a certificate from --metrics-cert-dir lets them
// verify the server too.
func SelfSigned(hosts ...string) (*Certs, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: keys.ServeName + " metrics (self-signed)"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Certs{cert: &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}, nil
}

// GetCertificate is tls.Config's GetCertificate: the current pair.
func (c *Certs) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.cert, nil
}

// Current returns the certificate served now.
func (c *Certs) Current() *tls.Certificate {
	cert, _ := c.GetCertificate(nil)
	return cert
}

// Watch reads the directory's pair again every period until ctx ends, and
// serves it from then on when the files changed and hold a valid pair. A
// pair that does not load (cert-manager writing one file before the other,
// a key that does not match) is logged and the previous one kept. Polling,
// not inotify: a Secret volume is updated by swapping a symlink, which
// file watches follow badly, and a read of two small files every few
// seconds costs nothing. A self-signed Certs has nothing to watch.
func (c *Certs) Watch(ctx context.Context, period time.Duration) {
	if c.dir == "" {
		return
	}
	logger := klog.FromContext(ctx)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed, err := c.reload()
		switch {
		case err != nil:
			logger.Error(err, c.what+" certificate not reloaded; still serving the previous one", "dir", c.dir)
		case changed:
			logger.Info(c.what+" certificate reloaded", "dir", c.dir, "notAfter", c.Current().Leaf.NotAfter)
		}
	}
}

// reload loads the pair when its files differ from the bytes last loaded.
func (c *Certs) reload() (bool, error) {
	crt, err := os.ReadFile(filepath.Join(c.dir, CertFile))
	if err != nil {
		return false, fmt.Errorf("%s: %w", c.flag, err)
	}
	key, err := os.ReadFile(filepath.Join(c.dir, KeyFile))
	if err != nil {
		return false, fmt.Errorf("%s: %w", c.flag, err)
	}
	c.mu.RLock()
	same := bytes.Equal(crt, c.crt) && bytes.Equal(key, c.key)
	c.mu.RUnlock()
	if same {
		return false, nil
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return false, fmt.Errorf("%s %s: %s and %s: %w", c.flag, c.dir, CertFile, KeyFile, err)
	}
	c.mu.Lock()
	c.cert, c.crt, c.key = &pair, crt, key
	c.mu.Unlock()
	return true, nil
}

// TLSConfig is the server configuration of the metrics endpoint: TLS 1.2
// or newer, and HTTP/1.1 only, as controller-runtime's metrics server
// does by default (HTTP/2's stream handling was the way in for the 2023
// "rapid reset" attacks, and a scraper gains nothing from it).
func (c *Certs) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: c.GetCertificate,
		NextProtos:     []string{"http/1.1"},
	}
}
