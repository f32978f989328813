package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kubectl-vc/kubectl-vc/pkg/leases"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// progress is what the manager is waiting for, said in the log. Without
// it a serve whose API server cannot be reached logged nothing for more
// than a minute (issue 29): every step before the controllers run (the
// first request, discovery, the caches, the Lease) waits on the API
// server, and each retried quietly.
type progress struct {
	logger klog.Logger
	mu     sync.Mutex
	what   string // "" while nothing is awaited
	since  time.Time
	server string
	// health is what /healthz answers, fed by the manager.
	health *health
}

// wait records that the manager now waits for what (on the API server),
// and logs it.
func (p *progress) wait(what string) {
	p.mu.Lock()
	p.what, p.since = what, time.Now()
	p.mu.Unlock()
	p.logger.Info("waiting for "+what, "apiServer", p.server)
}

// done records that nothing is awaited any more.
func (p *progress) done() {
	p.mu.Lock()
	p.what = ""
	p.mu.Unlock()
}

// current returns what is awaited and since when ("" when nothing).
func (p *progress) current() (string, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.what, p.since
}

// report logs, every period until ctx ends, what the manager still waits
// for and for how long, so a stuck start is never silent.
func (p *progress) report(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if what, since := p.current(); what != "" {
			p.logger.Info("still waiting for "+what, "apiServer", p.server, "for", time.Since(since).Round(time.Second))
		}
	}
}

// firstContact waits until the API server answers GET /version, each try
// bounded by tryTimeout, logging every failure with its cause: unreachable
// (refused, no route, TLS), or reachable but refusing the credentials. It
// returns early, with ctx's error, when ctx ends. Any HTTP answer counts as
// reachable: what is wrong past that (RBAC, missing CRDs) is said by the
// steps that need it.
func firstContact(ctx context.Context, kube kubernetes.Interface, p *progress, tryTimeout time.Duration) error {
	p.wait("the API server to answer")
	defer p.done()
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		raw, err := kube.Discovery().RESTClient().Get().AbsPath("/version").Do(tctx).Raw()
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var status apierrors.APIStatus
		switch {
		case err == nil:
			var v struct {
				GitVersion string `json:"gitVersion"`
			}
			_ = json.Unmarshal(raw, &v)
			p.logger.Info("the API server answers", "apiServer", p.server, "version", v.GitVersion)
			return nil
		case apierrors.IsUnauthorized(err):
			p.logger.Info("the API server refuses serve's credentials (401): check --kubeconfig, the token or the ServiceAccount", "apiServer", p.server)
			return nil
		case errors.As(err, &status) && status.Status().Code != 0 && status.Status().Code != http.StatusServiceUnavailable:
			return nil // some answer: the server is there
		}
		if errors.Is(err, context.DeadlineExceeded) {
			p.logger.Info("the API server does not answer; retrying", "apiServer", p.server, "attempt", attempt, "timeout", tryTimeout)
		} else {
			p.logger.Info("cannot reach the API server; retrying", "apiServer", p.server, "attempt", attempt, "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// warnOtherServe warns, once per holder, when another process holds the
// leader-election Lease and renewed it recently while this serve runs
// without --leader-elect: both then act on the same objects (two queue
// controllers each writing status, two podgroup controllers racing to
// create groups). It checks now and then every period until ctx ends. Two
// serves that both run without leader election hold no Lease, and this
// cannot see them (docs/serve.md).
func warnOtherServe(ctx context.Context, kube kubernetes.Interface, namespace, name string, period time.Duration) {
	logger := klog.FromContext(ctx)
	warned := ""
	for {
		l, err := kube.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			logger.V(2).Info("cannot read the leader-election Lease to look for another serve", "lease", namespace+"/"+name, "err", err)
		case leases.Of(l).Held(time.Now(), 0) && leases.Of(l).Holder != warned:
			st := leases.Of(l)
			// One sentence, as it was when it went through klog.Warningf:
			// a logr logger has no warning level.
			logger.Info(fmt.Sprintf("another serve holds the leader-election Lease %s/%s (holder %s, renewed %s ago) and acts; this one runs without --leader-elect, so both act on the same objects: stop one, or run both with --leader-elect",
				namespace, name, st.Holder, st.Since(time.Now()).Round(time.Second)))
			warned = st.Holder
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}

// hostOf is the API server of cfg as the log shows it.
func hostOf(cfg *rest.Config) string {
	if cfg.Host == "" {
		return "(none)"
	}
	return cfg.Host
}
