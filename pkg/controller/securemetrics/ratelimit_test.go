package securemetrics

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestUnknownTokensRateLimited: past the burst, a new token is refused
// with 429 without a review.
func TestUnknownTokensRateLimited(t *testing.T) {
	kube := fake.NewClientset()
	var reviews atomic.Int64
	kube.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		ok := tr.Spec.Token == "good"
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok, User: authenticationv1.UserInfo{Username: "scraper"}}
		return true, tr, nil
	})
	kube.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		sar.Status.Allowed = true
		return true, sar, nil
	})
	f := NewFilter(kube, "/metrics")
	h := f.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	get := func(token string) int {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if code := get("good"); code != http.StatusOK {
		t.Fatalf("the good token: %d", code)
	}
	codes := map[int]int{}
	for i := range 200 {
		codes[get(fmt.Sprintf("random-%d", i))]++
	}
	// The good token's review, then the burst (and what the rate refills
	// while the loop runs, a few at most).
	if n := reviews.Load(); n > 1+ReviewBurst+5 {
		t.Errorf("%d TokenReviews for 200 random tokens, want at most about %d", n, 1+ReviewBurst)
	}
	if codes[http.StatusTooManyRequests] == 0 || codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests] != 200 {
		t.Errorf("answers %v, want 401 and 429 only", codes)
	}
}

// TestKnownTokenNotRateLimited: the reviewer behind the token cache (what
// runs when the cache has no answer, e.g. a minute after the last one)
// reviews a token the API server accepted before even when the limiter is
// spent by unknown ones.
func TestKnownTokenNotRateLimited(t *testing.T) {
	kube := fake.NewClientset()
	var reviews atomic.Int64
	kube.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: tr.Spec.Token == "good", User: authenticationv1.UserInfo{Username: "scraper"}}
		return true, tr, nil
	})
	r := &tokenReviewer{client: kube.AuthenticationV1().TokenReviews(),
		limiter: rate.NewLimiter(ReviewRate, ReviewBurst), known: utilcache.NewLRUExpireCache(16), refused: utilcache.NewLRUExpireCache(16)}
	ctx := t.Context()
	if _, ok, err := r.AuthenticateToken(ctx, "good"); !ok || err != nil {
		t.Fatalf("good: %v %v", ok, err)
	}
	limited := 0
	for i := range 100 {
		if _, _, err := r.AuthenticateToken(ctx, fmt.Sprintf("random-%d", i)); errors.Is(err, errRateLimited) {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("100 unknown tokens, none rate-limited")
	}
	before := reviews.Load()
	if _, ok, err := r.AuthenticateToken(ctx, "good"); !ok || err != nil {
		t.Errorf("the known token while the limiter is spent: %v %v, want accepted", ok, err)
	}
	if reviews.Load() != before+1 {
		t.Errorf("the known token was not reviewed")
	}
}
