package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
)

// holdProxy forwards plain HTTP to the API server with the admin's
// credentials, but holds every list of path that carries a continue token
// (a page after the first) until Release, or, with expire, answers it as
// an API server answers a continue token older than its compaction: 410
// Expired. A test sees so what the binary printed before its second page
// was answered.
type holdProxy struct {
	srv      *httptest.Server
	release  chan struct{}
	once     sync.Once
	expire   bool
	held     atomic.Int32 // continue requests seen
	kubeconf string
}

func newHoldProxy(t *testing.T, path string, expire bool) *holdProxy {
	t.Helper()
	cfg := env.cp.AdminConfig()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &holdProxy{release: make(chan struct{}), expire: expire}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method == http.MethodGet && r.URL.Path == path && q.Get("continue") != "" && q.Get("watch") != "true" {
			p.held.Add(1)
			if p.expire {
				st := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.").ErrStatus
				st.Kind, st.APIVersion = "Status", "v1"
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusGone)
				_ = json.NewEncoder(w).Encode(st)
				return
			}
			select {
			case <-p.release:
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	// Registered after Close, so run before it: Close waits for held requests.
	t.Cleanup(p.Release)
	p.kubeconf = binary.ProxyKubeconfig(t, p.srv.URL)
	return p
}

// Release answers the held requests, and every later one at once.
func (p *holdProxy) Release() { p.once.Do(func() { close(p.release) }) }
