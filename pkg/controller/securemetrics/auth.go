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
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// Fairness (issue 58): the limits above are shared by every caller, and
// one caller alone could spend them: a token with no rights asking for ever
// new paths kept a reader never seen before at 429 for as long as it went
// on. Each caller now gets a share of its own first: a client address for
// the TokenReviews of tokens serve does not know (the token says nothing
// about its sender until it is reviewed), the reviewed user for the
// SubjectAccessReviews. One caller then spends at most CallerRate of the
// ReviewRate, and the rest is left to the others.
const (
	CallerRate  = 1 // per second and caller
	CallerBurst = 4
	// callers bounds the callers tracked at once (an LRU: a caller
	// forgotten starts again with a full share, within the shared limit).
	callers = 1024
	// callerTTL is how long a caller's share is kept after its last use.
	callerTTL = time.Minute
)

// What the authorization cache keeps is bounded in bytes: each entry is
// the SHA-256 of its review (a caller's groups and extra, from the API
// server, can be long) and its answer, whose reason is cut to
// maxReasonBytes; authzEntries such entries at most.
const (
	authzEntries   = 1024
	maxReasonBytes = 256
)

// Filter authenticates and authorizes the requests to an endpoint.
type Filter struct {
	authn  authenticator.Request
	authz  *sarAuthorizer
	tokens *tokenReviewer
	// paths are the paths served: any other is answered 404 before any
	// review, so that a caller cannot make a review, nor an entry in the
	// authorization cache, per path it invents.
	paths map[string]bool
	// clients shares the TokenReviews of unknown tokens out per client
	// address.
	clients *callerLimiter
}

// NewFilter builds a Filter whose reviews are sent with kube (serve's own
// identity, which needs create on tokenreviews and subjectaccessreviews),
// for the given paths: the only ones reviewed and served.
func NewFilter(kube kubernetes.Interface, paths ...string) *Filter {
	return newFilter(kube.AuthenticationV1().TokenReviews(), kube.AuthorizationV1().SubjectAccessReviews(), paths...)
}

func newFilter(tr authenticationclient.TokenReviewInterface, sar authorizationclient.SubjectAccessReviewInterface, paths ...string) *Filter {
	// Errors (the API server unreachable) are not cached: the next scrape
	// asks again.
	// The limiter sits behind the token cache, which calls the reviewer
	// only for a token it holds no answer for.
	reviewer := &tokenReviewer{
		client:  tr,
		limiter: rate.NewLimiter(ReviewRate, ReviewBurst),
		known:   utilcache.NewLRUExpireCache(1024),
		refused: utilcache.NewLRUExpireCache(1024),
	}
	tokens := tokencache.New(reviewer, false, tokenCacheTTL, denyCacheTTL)
	set := map[string]bool{}
	for _, p := range paths {
		set[p] = true
	}
	return &Filter{
		authn:   bearertoken.New(tokens),
		tokens:  reviewer,
		paths:   set,
		clients: newCallerLimiter(),
		authz: &sarAuthorizer{client: sar, cache: utilcache.NewLRUExpireCache(authzEntries),
			limiter: rate.NewLimiter(ReviewRate, ReviewBurst), callers: newCallerLimiter()},
	}
}

// callerLimiter gives each caller a share of its own (CallerRate, burst
// CallerBurst), for the callers seen lately.
type callerLimiter struct {
	mu    sync.Mutex
	share *utilcache.LRUExpireCache
}

func newCallerLimiter() *callerLimiter {
	return &callerLimiter{share: utilcache.NewLRUExpireCache(callers)}
}

// allow takes one review from caller's share, if it has one left.
func (c *callerLimiter) allow(caller string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var l *rate.Limiter
	if v, ok := c.share.Get(caller); ok {
		l = v.(*rate.Limiter)
	} else {
		l = rate.NewLimiter(CallerRate, CallerBurst)
	}
	c.share.Add(caller, l, callerTTL)
	return l.Allow()
}

// tokenReviewer asks the API server who a token is (TokenReview), at most
// at the limiter's rate for tokens it does not know.
type tokenReviewer struct {
	client  authenticationclient.TokenReviewInterface
	limiter *rate.Limiter
	// known holds the SHA-256 of tokens the API server accepted (not the
	// tokens: a heap profile shows what the heap holds).
	known *utilcache.LRUExpireCache
	// refused holds the SHA-256 of tokens refused within denyCacheTTL,
	// which the token cache answers without a review.
	refused *utilcache.LRUExpireCache
}

// reviewed tells whether a token needs no new review against the limits:
// accepted within knownTokenTTL, or refused within denyCacheTTL.
func (t *tokenReviewer) reviewed(sum [sha256.Size]byte) bool {
	if _, ok := t.known.Get(sum); ok {
		return true
	}
	_, ok := t.refused.Get(sum)
	return ok
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
		t.refused.Add(sum, struct{}{}, denyCacheTTL)
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
	// limiter bounds the reviews the cache does not answer, callers each
	// user's share of them.
	limiter *rate.Limiter
	callers *callerLimiter
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
	b, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	key := sha256.Sum256(b)
	if v, ok := a.cache.Get(key); ok {
		d := v.(decision)
		return d.decision, d.reason, nil
	}
	// The user's share first: a user past it leaves the shared limit to
	// the others.
	if !a.callers.allow(u.GetName()+"\x00"+u.GetUID()) || !a.limiter.Allow() {
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
	d.reason = truncate(d.reason, maxReasonBytes)
	a.cache.Add(key, d, ttl)
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
		// Only the paths served, and only GET, are reviewed: anything
		// else is answered before any review, so that neither the
		// reviews nor the cache's keys grow with what a caller invents.
		if !f.paths[r.URL.Path] {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "Method Not Allowed: only GET is served", http.StatusMethodNotAllowed)
			return
		}
		// A token serve has not reviewed lately is reviewed within its
		// sender's share first.
		if tok, ok := bearer(r); ok && !f.tokens.reviewed(sha256.Sum256([]byte(tok))) && !f.clients.allow(clientHost(r)) {
			tooMany(w, r)
			return
		}
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

// bearer is the request's bearer token, as bearertoken reads it.
func bearer(r *http.Request) (string, bool) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// clientHost is the request's client address without its port.
func clientHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// truncate cuts s to at most n bytes, at a character's start, saying how
// many bytes were left out.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}

// tooMany refuses a request whose review was rate-limited. Logged at -v=2
// only: a flood would otherwise flood the log too.
func tooMany(w http.ResponseWriter, r *http.Request) {
	klog.FromContext(r.Context()).V(2).Info("metrics request: reviews rate-limited, refused with 429", "path", r.URL.Path, "remote", r.RemoteAddr)
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Too Many Requests: "+errRateLimited.Error(), http.StatusTooManyRequests)
}
