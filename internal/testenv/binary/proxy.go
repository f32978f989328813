package binary

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// RecordingProxy forwards plain HTTP to the API server with the admin's
// credentials and records every request, so that a test sees exactly
// which list requests the binary made.
type RecordingProxy struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

// NewRecordingProxy starts a proxy to the server of cfg, with cfg's
// credentials; it stops when the test ends.
func NewRecordingProxy(t testing.TB, cfg *rest.Config) *RecordingProxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &RecordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.reqs = append(p.reqs, r.Clone(context.Background()))
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// Kubeconfig points at the proxy.
func (p *RecordingProxy) Kubeconfig(t testing.TB) string {
	t.Helper()
	return ProxyKubeconfig(t, p.srv.URL)
}

// ProxyKubeconfig writes a kubeconfig for the plain HTTP server at server (a
// test's proxy to the API server, which adds the credentials), in
// namespace default.
func ProxyKubeconfig(t testing.TB, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: anyone, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, namespace: default, user: anyone}}]
current-context: proxy
`, server)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Lists returns the query of every list (a GET of path that is not a
// watch) made since the last reset.
func (p *RecordingProxy) Lists(path string) []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []url.Values
	for _, r := range p.reqs {
		q := r.URL.Query()
		if r.Method == http.MethodGet && r.URL.Path == path && q.Get("watch") != "true" {
			out = append(out, q)
		}
	}
	return out
}

// Reset forgets the requests made so far.
func (p *RecordingProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reqs = nil
}

// Count is how many requests were made since the last reset.
func (p *RecordingProxy) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}
