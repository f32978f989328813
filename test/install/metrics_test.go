package install

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
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
	saKubeconfig := serviceAccountKubeconfig(t, cp.AdminConfig(), kube)
	ns := "metrics-access"
	if _, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tokens := scrapers(t, kube, ns)
	s := cptest.StartServe(t, binary, kubeconfig, "--kubeconfig="+saKubeconfig, "--controllers=queue",
		"--metrics-secure=true", "--profiling", "--leader-elect=false")
	checkAccess(t, "https://"+s.Metrics, tokens, "workqueue_adds_total")
	byCode, samples := requestsByCode403(t, s, tokens[scraperReader])
	if byCode["403"] != 0 {
		t.Errorf("serve was refused: %v", samples)
	}
	// Answers are cached: more scrapes by the same reader cost no review.
	// (serve's start-up writes, the queues and their events, settle
	// first: its reviews are then its only POSTs.)
	before := reviewsSent(t, s, tokens[scraperReader])
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		now := reviewsSent(t, s, tokens[scraperReader])
		if now == before {
			break
		}
		before = now
	}
	for i := 0; i < 5; i++ {
		if code, _, err := scrape("https://"+s.Metrics+"/metrics", tokens[scraperReader]); err != nil || code != http.StatusOK {
			t.Fatalf("scrape %d: %d %v", i, code, err)
		}
	}
	if after := reviewsSent(t, s, tokens[scraperReader]); after != before {
		t.Errorf("5 scrapes within the cache's life sent %v reviews", after-before)
	}
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

// reviewsSent is serve's POSTs so far (its reviews are its only POSTs
// once the queues root and default exist).
func reviewsSent(t *testing.T, s *cptest.Serve, token string) float64 {
	t.Helper()
	_, body, err := scrape("https://"+s.Metrics+"/metrics", token)
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "rest_client_requests_total{") && strings.Contains(l, `method="POST"`) {
			var v float64
			fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v)
			n += v
		}
	}
	return n
}
