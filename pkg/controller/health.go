package controller

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// DefaultCacheSyncTimeout is how long the informer caches may take to
// fill before /healthz fails (--cache-sync-timeout): several times the
// largest start measured (docs/benchmarks.md); a cache that has
// not filled after minutes waits on something a restart may cure (a
// watch stuck on a dead connection) or that someone must fix (RBAC), and
// either way kubelet's restarts make it seen.
const DefaultCacheSyncTimeout = 3 * time.Minute

// leaderHealthTimeout is how long past its Lease's expiry a leader that
// could not renew it still answers healthy (client-go's HealthzAdaptor;
// kube-controller-manager uses the same 20 s).
const leaderHealthTimeout = 20 * time.Second

// health is what /healthz answers. Before, it answered ok whatever the
// manager's state; now the manager tells it when it is stuck: the caches
// not filled within syncTimeout, a controller's loop returned while serve
// runs, the Lease lost, or (client-go's check) a leader that has not
// renewed its Lease for leaderHealthTimeout past its expiry.
type health struct {
	mu          sync.Mutex
	now         func() time.Time
	syncTimeout time.Duration
	// cachesSince is when the wait for the caches began; zero when not
	// waiting.
	cachesSince time.Time
	// failed says why serve is broken for good; "" while it is not.
	failed string
	leader *leaderelection.HealthzAdaptor
}

// newHealth checks the caches against syncTimeout (Config.withDefaults
// has given it its default).
func newHealth(syncTimeout time.Duration) *health {
	return &health{now: time.Now, syncTimeout: syncTimeout}
}

func (h *health) cachesWaiting() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cachesSince = h.now()
}

func (h *health) cachesSynced() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cachesSince = time.Time{}
}

// fail marks serve unhealthy for good (the first reason is kept).
func (h *health) fail(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed == "" {
		h.failed = reason
	}
}

func (h *health) setLeader(a *leaderelection.HealthzAdaptor) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.leader = a
}

// check returns why serve is not healthy, or nil.
func (h *health) check(r *http.Request) error {
	h.mu.Lock()
	failed, since, leader := h.failed, h.cachesSince, h.leader
	now := h.now()
	h.mu.Unlock()
	if failed != "" {
		return errors.New(failed)
	}
	if !since.IsZero() && now.Sub(since) > h.syncTimeout {
		return fmt.Errorf("the informer caches have not filled in %v", now.Sub(since).Round(time.Second))
	}
	if leader != nil {
		if err := leader.Check(r); err != nil {
			return err
		}
	}
	return nil
}

// ServeHTTP answers /healthz: "ok", or 500 and why not.
func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.check(r); err != nil {
		http.Error(w, "unhealthy: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte("ok"))
}
