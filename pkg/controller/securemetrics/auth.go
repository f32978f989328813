// Package securemetrics protects serve's /metrics (and pprof) the way the
// Kubernetes components and controller-runtime's metrics server do: HTTPS,
// each request's bearer token checked by the API server (TokenReview) and
// the caller's right to GET the path checked by it too
// (SubjectAccessReview on a non-resource URL), both answers cached briefly.
//
// The API server decides both; this package only asks it. The pieces are
// k8s.io/apiserver's: its bearer-token request authenticator and its token
// cache (the one the delegating authenticator of kube-controller-manager
// and controller-runtime wraps around TokenReview: one review per token at
// a time, answers kept for a TTL), and its user and authorizer types. The
// delegating authenticator and authorizer themselves are not used: they
// come with the webhook client, which links gRPC, OpenTelemetry's exporter,
// the konnectivity client and CEL (for authorization webhooks' match
// conditions), and their package initialization added CPU to every run of
// every kubectl-vc command, 'version --client' included, and megabytes to
// the binary (measured in docs/security.md#cost). What is left of them here is
// the TokenReview and SubjectAccessReview request, a few lines each, and an
// expiring cache of the authorization answers.
package securemetrics

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller/quietlog"
)

// Cache lifetimes of the answers: a scraper every 15-30 s costs the API
// server one TokenReview and one SubjectAccessReview a minute; a revoked
// grant takes effect within a minute, a new one within 10 s.
const (
	tokenCacheTTL = time.Minute
	allowCacheTTL = time.Minute
	denyCacheTTL  = 10 * time.Second
	reviewTimeout = 10 * time.Second
)

// Reviews the caches cannot answer are rate-limited: without a limit a
// flood of requests, each with a new random bearer token, cost the API
// server one TokenReview each (1 000 for 1 000 requests, measured:
// docs/security.md), sent as serve itself, in the same API Priority and
// Fairness flow as its controllers' work. Past the limit a request is
// answered 429 without asking. A token the API server accepted within
// knownTokenTTL is never held back, so a scraper keeps reading during a
// flood even when its cached identity expires. Five a second is far above
// what scrapers need (one review per scraper and minute) and small beside
// what an API server answers.
const (
	ReviewRate    = 5 // per second
	ReviewBurst   = 20
	knownTokenTTL = 10 * time.Minute
)

// Filter authenticates and authorizes the requests to an endpoint.
type Filter struct {
	authn authenticator.Request
	authz *sarAuthorizer
}

// NewFilter builds a Filter whose reviews are sent with kube (serve's own
// identity, which needs create on tokenreviews and subjectaccessreviews).
func NewFilter(kube kubernetes.Interface) *Filter {
	return newFilter(kube.AuthenticationV1().TokenReviews(), kube.AuthorizationV1().SubjectAccessReviews())
}

func newFilter(tr authenticationclient.TokenReviewInterface, sar authorizationclient.SubjectAccessReviewInterface) *Filter {
	// Errors (the API server unreachable) are not cached: the next scrape
	// asks again.
	// The limiter sits behind the token cache, which calls the reviewer
	// only for a token it holds no answer for.
	tokens := tokencache.New(&tokenReviewer{
		client:  tr,
		limiter: rate.NewLimiter(ReviewRate, ReviewBurst),
		known:   utilcache.NewLRUExpireCache(1024),
	}, false, tokenCacheTTL, denyCacheTTL)
	return &Filter{
		authn: bearertoken.New(tokens),
		authz: &sarAuthorizer{client: sar, cache: utilcache.NewLRUExpireCache(1024), limiter: rate.NewLimiter(ReviewRate, ReviewBurst)},
	}
}

// tokenReviewer asks the API server who a token is (TokenReview), at most
// at the limiter's rate for tokens it does not know.
type tokenReviewer struct {
	client  authenticationclient.TokenReviewInterface
	limiter *rate.Limiter
	// known holds the SHA-256 of tokens the API server accepted (not the
	// tokens: a heap profile shows what the heap holds).
	known *utilcache.LRUExpireCache
}

func (t *tokenReviewer) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	logger := klog.FromContext(ctx) // before quietlog caps it
	sum := sha256.Sum256([]byte(token))
	if _, ok := t.known.Get(sum); !ok && !t.limiter.Allow() {
		return nil, false, errRateLimited
	}
	// Quiet: at -v=8 client-go would log the request's body, the token.
	ctx, cancel := context.WithTimeout(quietlog.Context(ctx), reviewTimeout)
	defer cancel()
	// The token's audiences are left to the API server's defaults: a
	// ServiceAccount token kubelet mounts, or one 'kubectl create token'
	// makes, is for the API server.
	r, err := t.client.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, false, &reviewError{fmt.Errorf("TokenReview: %w", err)}
	}
	if !r.Status.Authenticated {
		if r.Status.Error != "" {
			logger.V(2).Info("metrics request: token not accepted", "reason", r.Status.Error)
		}
		return nil, false, nil
	}
	t.known.Add(sum, struct{}{}, knownTokenTTL)
	u := r.Status.User
	extra := map[string][]string{}
	for k, v := range u.Extra {
		extra[k] = v
	}
	return &authenticator.Response{
		Audiences: r.Status.Audiences,
		User:      &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra},
	}, true, nil
}

// sarAuthorizer asks the API server whether a user may make a
// non-resource request (SubjectAccessReview), and keeps each answer for a
// while: allowed for allowCacheTTL, denied for denyCacheTTL.
type sarAuthorizer struct {
	client authorizationclient.SubjectAccessReviewInterface
	cache  *utilcache.LRUExpireCache
	// limiter bounds the reviews the cache does not answer: a user with
	// a valid token asking for ever new paths costs one review each.
	limiter *rate.Limiter
}

func (a *sarAuthorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionDeny, "no user", nil
	}
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	spec := authorizationv1.SubjectAccessReviewSpec{
		User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: attrs.GetPath(), Verb: attrs.GetVerb()},
	}
	key, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	if v, ok := a.cache.Get(string(key)); ok {
		d := v.(decision)
		return d.decision, d.reason, nil
	}
	if !a.limiter.Allow() {
		return authorizer.DecisionNoOpinion, "", errRateLimited
	}
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	r, err := a.client.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return authorizer.DecisionNoOpinion, "", fmt.Errorf("SubjectAccessReview: %w", err)
	}
	d := decision{decision: authorizer.DecisionDeny, reason: r.Status.Reason}
	ttl := denyCacheTTL
	if r.Status.Allowed && !r.Status.Denied {
		d.decision, ttl = authorizer.DecisionAllow, allowCacheTTL
	}
	if r.Status.EvaluationError != "" && d.decision != authorizer.DecisionAllow {
		d.reason = strings.TrimSpace(d.reason + " " + r.Status.EvaluationError)
	}
	a.cache.Add(string(key), d, ttl)
	return d.decision, d.reason, nil
}

// errRateLimited: the review was not sent, its limiter's rate being
// spent; the request is refused with 429 and may be tried again.
var errRateLimited = errors.New("too many requests to review: try again in a second")

// reviewError is a review the API server did not answer: the request is
// then refused with 500, not 401, since the caller may well be allowed.
type reviewError struct{ error }

func (e *reviewError) Unwrap() error { return e.error }

type decision struct {
	decision authorizer.Decision
	reason   string
}

// Wrap returns next behind the checks: 401 without a valid token, 403
// when the token's user may not GET the path (a non-resource URL such as
// /metrics or /debug/pprof/heap, verb the request's method in lower case,
// as the API server itself authorizes non-resource requests), 500 when the
// API server could not be asked.
func (f *Filter) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logger := klog.FromContext(r.Context())
		res, ok, err := f.authn.AuthenticateRequest(r)
		if errors.Is(err, errRateLimited) {
			tooMany(w, r)
			return
		}
		var unanswered *reviewError
		if errors.As(err, &unanswered) {
			logger.Error(err, "metrics request: cannot ask the API server who the caller is", "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "Internal Server Error: authentication could not be checked", http.StatusInternalServerError)
			return
		}
		if !ok {
			http.Error(w, "Unauthorized: send a bearer token the API server accepts (e.g. a ServiceAccount token)", http.StatusUnauthorized)
			return
		}
		attrs := authorizer.AttributesRecord{
			User:            res.User,
			Verb:            strings.ToLower(r.Method),
			Path:            r.URL.Path,
			ResourceRequest: false,
		}
		decision, reason, err := f.authz.Authorize(r.Context(), attrs)
		if errors.Is(err, errRateLimited) {
			tooMany(w, r)
			return
		}
		if err != nil {
			logger.Error(err, "metrics request: cannot ask the API server for authorization", "user", res.User.GetName(), "path", r.URL.Path)
			http.Error(w, "Internal Server Error: authorization could not be checked", http.StatusInternalServerError)
			return
		}
		if decision != authorizer.DecisionAllow {
			logger.V(2).Info("metrics request forbidden", "user", res.User.GetName(), "path", r.URL.Path, "reason", reason)
			http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s %s (bind the ClusterRole kubectl-vc-metrics-reader)",
				res.User.GetName(), attrs.Verb, r.URL.Path), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tooMany refuses a request whose review was rate-limited. Logged at -v=2
// only: a flood would otherwise flood the log too.
func tooMany(w http.ResponseWriter, r *http.Request) {
	klog.FromContext(r.Context()).V(2).Info("metrics request: reviews rate-limited, refused with 429", "path", r.URL.Path, "remote", r.RemoteAddr)
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Too Many Requests: "+errRateLimited.Error(), http.StatusTooManyRequests)
}
