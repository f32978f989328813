package install

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

// Grants a scraper can hold: nothing, the reader role install applies, or
// a role for Go's profiles.
const (
	scraperNone     = "scraper-none"
	scraperReader   = "scraper-reader"
	scraperProfiler = "scraper-profiler"
)

// scrapers makes ServiceAccounts in ns with no grant, with the ClusterRole
// kubectl-vc-metrics-reader, and with get on /debug/pprof/*, and returns a
// TokenRequest token of each.
func scrapers(t *testing.T, kube kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-pprof-reader-" + ns},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/debug/pprof/*"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{scraperNone: "", scraperReader: "kubectl-vc-metrics-reader", scraperProfiler: "test-pprof-reader-" + ns}
	tokens := map[string]string{}
	for sa, role := range roles {
		if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if role != "" {
			if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + sa},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[sa] = tok.Status.Token
	}
	return tokens
}

// scrape GETs url over TLS without verifying the server (serve's
// certificate is self-signed), with token unless empty, and returns the
// status code and body.
func scrape(url, token string) (int, string, error) {
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// checkAccess is the table both the local and the in-cluster test hold
// serve's metrics address (base, "https://host:port") to.
func checkAccess(t *testing.T, base string, tokens map[string]string, wantMetric string) {
	t.Helper()
	for _, tc := range []struct {
		path, who string
		want      int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "not-a-token", http.StatusUnauthorized},
		{"/metrics", scraperNone, http.StatusForbidden},
		{"/metrics", scraperProfiler, http.StatusForbidden},
		{"/metrics", scraperReader, http.StatusOK},
		{"/debug/pprof/heap", "", http.StatusUnauthorized},
		{"/debug/pprof/heap", scraperNone, http.StatusForbidden},
		{"/debug/pprof/heap", scraperReader, http.StatusForbidden},
		{"/debug/pprof/heap", scraperProfiler, http.StatusOK},
	} {
		token := tokens[tc.who]
		if tc.who == "not-a-token" {
			token = tc.who
		}
		code, body, err := scrape(base+tc.path, token)
		if err != nil {
			t.Errorf("GET %s as %q: %v", tc.path, tc.who, err)
			continue
		}
		if code != tc.want {
			t.Errorf("GET %s as %q: %d, want %d: %.200s", tc.path, tc.who, code, tc.want, body)
		}
		if code == http.StatusOK && tc.path == "/metrics" && !strings.Contains(body, wantMetric) {
			t.Errorf("GET /metrics as %q: no %s in\n%.500s", tc.who, wantMetric, body)
		}
	}
	// Plain HTTP to the HTTPS port is not served.
	if code, _, err := func() (int, string, error) {
		resp, err := http.Get(strings.Replace(base, "https://", "http://", 1) + "/metrics")
		if err != nil {
			return 0, "", err
		}
		resp.Body.Close()
		return resp.StatusCode, "", nil
	}(); err == nil && code == http.StatusOK {
		t.Errorf("plain HTTP /metrics answered 200")
	}
}

// TestMetricsAccess (issue 31): serve as its ServiceAccount, metrics and
// pprof over HTTPS: no token 401, a token without a grant 403, the
// ClusterRole kubectl-vc-metrics-reader 200 with the metrics (and 403 for
// the profiles), a grant on /debug/pprof/* 200 for them. serve's own
// requests (TokenReview, SubjectAccessReview) are never refused: its
// ClusterRole has them.
func TestMetricsAccess(t *testing.T) {
	kube := kube(t)
	// serve reaches the API server through a proxy that counts its reviews.
	proxy := startReviewProxy(t, cp.AdminConfig())
	saKubeconfig := proxy.kubeconfig(t, serviceAccountKubeconfig(t, cp.AdminConfig(), kube))
	// A namespace (and grants named after it) of this run's own, removed
	// after it: -count=2 meets no object of the previous run.
	nsObj, err := kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "metrics-access-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	t.Cleanup(func() { deleteScrapers(t, kube, ns) })
	tokens := scrapers(t, kube, ns)
	s := cptest.StartServe(t, binary, kubeconfig, "--kubeconfig="+saKubeconfig, "--controllers=queue",
		"--metrics-secure=true", "--profiling", "--leader-elect=false")
	checkAccess(t, "https://"+s.Metrics, tokens, "workqueue_adds_total")
	if proxy.reviews.Load() == 0 {
		t.Fatal("the proxy counted no review while serve checked the scrapers: the count below would prove nothing")
	}
	byCode, samples := requestsByCode403(t, s, tokens[scraperReader])
	if byCode["403"] != 0 {
		t.Errorf("serve was refused: %v", samples)
	}
	// Answers are cached: more scrapes by the same reader cost no review.
	// The first scrape here is reviewed again should the reader's answers
	// have expired since checkAccess (they live a minute); the five after
	// it, a few local requests, come well within that minute. Only the
	// reviews are counted: serve's other requests (its queues, their
	// events) may come at any time.
	if code, _, err := scrape("https://"+s.Metrics+"/metrics", tokens[scraperReader]); err != nil || code != http.StatusOK {
		t.Fatalf("scrape: %d %v", code, err)
	}
	before := proxy.reviews.Load()
	for i := 0; i < 5; i++ {
		if code, _, err := scrape("https://"+s.Metrics+"/metrics", tokens[scraperReader]); err != nil || code != http.StatusOK {
			t.Fatalf("scrape %d: %d %v", i, code, err)
		}
	}
	if after := proxy.reviews.Load(); after != before {
		t.Errorf("5 scrapes within the cache's life sent %v reviews", after-before)
	}
}

// deleteScrapers removes what scrapers made for ns: the namespace (its
// ServiceAccounts with it) and the cluster-wide role and bindings.
func deleteScrapers(t *testing.T, kube kubernetes.Interface, ns string) {
	ctx := context.Background()
	for _, sa := range []string{scraperNone, scraperReader, scraperProfiler} {
		if err := kube.RbacV1().ClusterRoleBindings().Delete(ctx, ns+"-"+sa, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	}
	if err := kube.RbacV1().ClusterRoles().Delete(ctx, "test-pprof-reader-"+ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: %v", err)
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: %v", err)
	}
}

// reviewProxy is an HTTPS reverse proxy to the API server that counts the
// TokenReviews and SubjectAccessReviews sent through it: the requests by
// which serve checks a scraper, told apart from its others by their path.
type reviewProxy struct {
	srv     *httptest.Server
	reviews atomic.Int64
}

// Where serve sends its reviews.
const (
	tokenReviewsPath = "/apis/authentication.k8s.io/v1/tokenreviews"
	accessReviewPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
)

// startReviewProxy proxies to admin's API server, trusting its CA; each
// request keeps its own credentials (the proxy adds none).
func startReviewProxy(t *testing.T, admin *rest.Config) *reviewProxy {
	t.Helper()
	target, err := url.Parse(admin.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(&rest.Config{Host: admin.Host, TLSClientConfig: rest.TLSClientConfig{
		CAData: admin.CAData, CAFile: admin.CAFile, ServerName: admin.ServerName}})
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	p := &reviewProxy{}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && (r.URL.Path == tokenReviewsPath || r.URL.Path == accessReviewPath) {
			p.reviews.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// kubeconfig writes a copy of the kubeconfig at path whose clusters are the
// proxy, and returns the copy's path.
func (p *reviewProxy) kubeconfig(t *testing.T, path string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	for _, c := range cfg.Clusters {
		c.Server, c.CertificateAuthorityData, c.CertificateAuthority = p.srv.URL, ca, ""
	}
	out := filepath.Join(t.TempDir(), "proxied.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// requestsByCode403 reads serve's request counts over its HTTPS endpoint.
func requestsByCode403(t *testing.T, s *cptest.Serve, token string) (map[string]float64, []string) {
	t.Helper()
	_, body, err := scrape("https://"+s.Metrics+"/metrics", token)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	var samples []string
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, "rest_client_requests_total{") {
			continue
		}
		m := codeLabel.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var v float64
		fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v)
		out[m[1]] += v
		if m[1] == "403" {
			samples = append(samples, l)
		}
	}
	return out, samples
}
