package securemetrics

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// reviewCounts is a fake API server that accepts the tokens "user:NAME"
// as user NAME and allows a user only its paths in allowed.
type reviewCounts struct {
	tokenReviews, accessReviews atomic.Int64
}

func fakeReviews(allowed map[string]bool, reason string) (*fake.Clientset, *reviewCounts) {
	kube := fake.NewClientset()
	n := &reviewCounts{}
	kube.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n.tokenReviews.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		name, ok := strings.CutPrefix(tr.Spec.Token, "user:")
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok, User: authenticationv1.UserInfo{Username: name}}
		return true, tr, nil
	})
	kube.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n.accessReviews.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sar.Status.Allowed = allowed[sar.Spec.User+" "+sar.Spec.NonResourceAttributes.Path]
		sar.Status.Reason = reason
		return true, sar, nil
	})
	return kube, n
}

func getter(f *Filter) func(remote, token, path string) int {
	h := f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	return func(remote, token, path string) int {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.RemoteAddr = remote
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
}

// TestUnservedPathsNotReviewed (issue 58): a path not served is 404
// before any review, whatever the token; so is a method other than GET.
// Before, each new path cost a SubjectAccessReview and a cache entry.
func TestUnservedPathsNotReviewed(t *testing.T) {
	kube, n := fakeReviews(nil, "")
	get := getter(NewFilter(kube, "/metrics"))
	for i := range 1000 {
		if code := get("192.0.2.1:1", "user:flood", fmt.Sprintf("/metrics/%d%s", i, strings.Repeat("x", 1000))); code != http.StatusNotFound {
			t.Fatalf("path %d: %d, want 404", i, code)
		}
	}
	if tr, sar := n.tokenReviews.Load(), n.accessReviews.Load(); tr+sar != 0 {
		t.Errorf("%d TokenReviews and %d SubjectAccessReviews for paths not served, want none", tr, sar)
	}
	h := NewFilter(kube, "/metrics").Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	r := httptest.NewRequest("DELETEEVERYTHING", "/metrics", nil)
	r.Header.Set("Authorization", "Bearer user:flood")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMethodNotAllowed || n.tokenReviews.Load() != 0 {
		t.Errorf("an odd method: %d after %d reviews, want 405 without any", w.Code, n.tokenReviews.Load())
	}
}

// TestNoCallerStarvesAnother (issue 58): a user spending its share of
// SubjectAccessReviews (asking for every path served, each refused) and a
// client sending random tokens leave a reader never seen before, from
// another address, its answer: 200. Before, both shared one limit.
func TestNoCallerStarvesAnother(t *testing.T) {
	paths := []string{"/metrics"}
	for i := range 100 {
		paths = append(paths, fmt.Sprintf("/p/%d", i))
	}
	kube, n := fakeReviews(map[string]bool{"reader /metrics": true}, "")
	get := getter(NewFilter(kube, paths...))
	codes := map[int]int{}
	for round := range 3 {
		for _, p := range paths {
			codes[get("192.0.2.1:1", "user:flood", p)]++
		}
		for i := range 100 {
			codes[get("192.0.2.1:2", fmt.Sprintf("random-%d-%d", round, i), "/metrics")]++
		}
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("the flood was never held back: %v", codes)
	}
	if sar := n.accessReviews.Load(); sar > CallerBurst+2 {
		t.Errorf("one user cost %d SubjectAccessReviews, want about its share (%d)", sar, CallerBurst)
	}
	if tr := n.tokenReviews.Load(); tr > 1+CallerBurst+2 {
		t.Errorf("one address cost %d TokenReviews, want about its share (%d)", tr, 1+CallerBurst)
	}
	if code := get("192.0.2.2:1", "user:reader", "/metrics"); code != http.StatusOK {
		t.Errorf("a reader never seen before, during the flood: %d, want 200", code)
	}
}

// TestAuthorizationCacheBounded (issue 58): the cache keeps a fixed-size
// key (a hash of the review) and a reason cut to maxReasonBytes, however
// large the user's groups and the API server's reason.
func TestAuthorizationCacheBounded(t *testing.T) {
	kube, _ := fakeReviews(nil, strings.Repeat("r", 1<<20))
	f := NewFilter(kube, "/metrics")
	get := getter(f)
	if code := get("192.0.2.1:1", "user:"+strings.Repeat("u", 8<<10), "/metrics"); code != http.StatusForbidden {
		t.Fatalf("got %d, want 403", code)
	}
	keys := f.authz.cache.Keys()
	if len(keys) != 1 {
		t.Fatalf("%d entries", len(keys))
	}
	if _, ok := keys[0].([32]byte); !ok {
		t.Errorf("the key is %T, want a SHA-256", keys[0])
	}
	v, _ := f.authz.cache.Get(keys[0])
	if r := v.(decision).reason; len(r) > maxReasonBytes+32 {
		t.Errorf("the cached reason holds %d bytes, want at most about %d", len(r), maxReasonBytes)
	}
}
