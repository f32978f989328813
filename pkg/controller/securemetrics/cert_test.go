package securemetrics

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writePair writes a fresh self-signed pair for cn into dir.
func writePair(t *testing.T, dir, cn string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{cn}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func servedCN(t *testing.T, c *Certs) string {
	t.Helper()
	cert, err := c.GetCertificate(nil)
	if err != nil || cert == nil {
		t.Fatalf("no certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

// TestCertReload: the pair in the directory is served; a new pair written
// over it is served from the next check on; a broken pair (a key that
// does not match, one file missing) is not, and the last good one stays.
func TestCertReload(t *testing.T) {
	dir := t.TempDir()
	writePair(t, dir, "first")
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cn := servedCN(t, c); cn != "first" {
		t.Fatalf("serving %q", cn)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Watch(ctx, 20*time.Millisecond)

	waitCN := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for servedCN(t, c) != want {
			if time.Now().After(deadline) {
				t.Fatalf("still serving %q, want %q", servedCN(t, c), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	writePair(t, dir, "second")
	waitCN("second")

	// A certificate whose key is another's: kept out.
	other := t.TempDir()
	writePair(t, other, "third")
	crt, _ := os.ReadFile(filepath.Join(other, CertFile))
	if err := os.WriteFile(filepath.Join(dir, CertFile), crt, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if cn := servedCN(t, c); cn != "second" {
		t.Fatalf("a mismatched pair was served: %q", cn)
	}
	// The key follows (cert-manager writes one file, then the other).
	key, _ := os.ReadFile(filepath.Join(other, KeyFile))
	if err := os.WriteFile(filepath.Join(dir, KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	waitCN("third")

	// Files gone: the last good pair stays.
	os.Remove(filepath.Join(dir, KeyFile))
	time.Sleep(200 * time.Millisecond)
	if cn := servedCN(t, c); cn != "third" {
		t.Fatalf("serving %q after the key went", cn)
	}
}

// TestCertReloadThroughSymlinks: a Secret volume swaps a ..data symlink;
// the reload follows it.
func TestCertReloadThroughSymlinks(t *testing.T) {
	dir := t.TempDir()
	v1, v2 := filepath.Join(dir, "..v1"), filepath.Join(dir, "..v2")
	for _, d := range []string{v1, v2} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writePair(t, v1, "v1")
	writePair(t, v2, "v2")
	if err := os.Symlink("..v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CertFile, KeyFile} {
		if err := os.Symlink(filepath.Join("..data", f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Watch(ctx, 20*time.Millisecond)
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink("..v2", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for servedCN(t, c) != "v2" {
		if time.Now().After(deadline) {
			t.Fatal("the swapped pair was not served")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLoadDirErrors(t *testing.T) {
	if _, err := LoadDir(t.TempDir()); err == nil {
		t.Fatal("an empty directory loaded")
	}
}

func TestSelfSigned(t *testing.T) {
	c, err := SelfSigned("localhost", "127.0.0.1", "svc.ns.svc")
	if err != nil {
		t.Fatal(err)
	}
	leaf := c.Current().Leaf
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
	if err := leaf.VerifyHostname("svc.ns.svc"); err != nil {
		t.Error(err)
	}
}
