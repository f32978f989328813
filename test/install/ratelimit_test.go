package install

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/securemetrics"
)

// TestRandomTokensRateLimited (issue 42, Deliver 5): a flood of requests
// to serve's HTTPS port, each with a new random bearer token, costs the
// API server at most the limiter's burst plus its rate over the flood's
// duration in TokenReviews, not one each (1 000 before the limit); each
// is refused (401, or 429 past the limit); and a scraper whose token serve
// knows still reads the metrics, during the flood and after it.
func TestRandomTokensRateLimited(t *testing.T) {
	kube := kube(t)
	proxy := startReviewProxy(t, cp.AdminConfig())
	saKubeconfig := proxy.kubeconfig(t, serviceAccountKubeconfig(t, cp.AdminConfig(), kube))
	nsObj, err := kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "metrics-flood-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	t.Cleanup(func() { deleteScrapers(t, kube, ns) })
	tokens := scrapers(t, kube, ns)
	s := cptest.StartServe(t, binary, kubeconfig, "--kubeconfig="+saKubeconfig, "--controllers=queue",
		"--metrics-secure=true", "--leader-elect=false")
	url := "https://" + s.Metrics + "/metrics"
	if code, _, err := scrape(url, tokens[scraperReader]); err != nil || code != http.StatusOK {
		t.Fatalf("the reader before the flood: %d %v", code, err)
	}

	const requests, parallel = 1000, 8
	before := proxy.reviews.Load()
	start := time.Now()
	var (
		mu     sync.Mutex
		codes  = map[int]int{}
		errs   []error
		wg     sync.WaitGroup
		next   = make(chan struct{})
		client = insecureClient()
	)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				code, err := get(client, url, randomToken(t))
				mu.Lock()
				codes[code]++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range requests {
		next <- struct{}{}
		if i == requests/2 {
			// The reader's token is in serve's cache: its scrape is no
			// review and is not held back by the flood.
			if code, _, err := scrape(url, tokens[scraperReader]); err != nil || code != http.StatusOK {
				t.Errorf("the reader during the flood: %d %v", code, err)
			}
		}
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	reviews := proxy.reviews.Load() - before
	t.Logf("%d requests with random tokens in %v: %d TokenReviews at the API server; answers %v", requests, elapsed.Round(time.Millisecond), reviews, codes)
	if len(errs) > 0 {
		t.Fatalf("%d requests failed, e.g. %v", len(errs), errs[0])
	}
	if n := codes[http.StatusUnauthorized] + codes[http.StatusTooManyRequests]; n != requests {
		t.Errorf("answers %v: every request must be refused with 401 or 429", codes)
	}
	// The limiter's burst, its rate over the flood, and one in flight per
	// worker when the measurement began.
	bound := int64(securemetrics.ReviewBurst) + int64(elapsed.Seconds()*securemetrics.ReviewRate+1) + parallel
	if reviews > bound {
		t.Errorf("%d TokenReviews for %d random tokens in %v, want at most %d", reviews, requests, elapsed, bound)
	}
	if code, _, err := scrape(url, tokens[scraperReader]); err != nil || code != http.StatusOK {
		t.Errorf("the reader after the flood: %d %v", code, err)
	}
}

// randomToken is a bearer token nobody issued.
func randomToken(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Error(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// insecureClient keeps its connections (a flood over a few TLS sessions,
// as an attacker would send it) and does not verify serve's self-signed
// certificate.
func insecureClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// get GETs url with token and returns the status code.
func get(c *http.Client, url, token string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
