package controller_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// slowStop is a controller that caches nothing and, once its context ends,
// returns only when release is closed: a worker still finishing a long
// sync.
type slowStop struct {
	running  chan struct{}
	release  chan struct{}
	returned atomic.Bool
}

func newSlowStop() *slowStop {
	return &slowStop{running: make(chan struct{}), release: make(chan struct{})}
}

func (c *slowStop) Name() string                                                  { return "slow-stop" }
func (c *slowStop) AddFlags(*pflag.FlagSet)                                       {}
func (c *slowStop) Validate() error                                               { return nil }
func (c *slowStop) Initialize(context.Context, *framework.ControllerOption) error { return nil }
func (c *slowStop) CacheReads() []framework.CacheRead                             { return nil }
func (c *slowStop) Run(ctx context.Context) {
	close(c.running)
	<-ctx.Done()
	<-c.release
	c.returned.Store(true)
}

// fakeAPIServer answers what a manager of a controller that caches nothing
// asks: /version, and the one Lease of leader election (created, read,
// updated).
func fakeAPIServer(t *testing.T, onWrite ...func(holder string)) *rest.Config {
	t.Helper()
	var mu sync.Mutex
	var lease []byte
	var leaseType string // as the client sent it: protobuf
	const leases = "/apis/coordination.k8s.io/v1/namespaces/ns/leases"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/version":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"gitVersion":"v0.0.0-fake"}`)
		case r.URL.Path == leases+"/lease" && r.Method == http.MethodGet:
			if lease == nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
				return
			}
			w.Header().Set("Content-Type", leaseType)
			_, _ = w.Write(lease)
		case (r.URL.Path == leases && r.Method == http.MethodPost) || (r.URL.Path == leases+"/lease" && r.Method == http.MethodPut):
			b, _ := io.ReadAll(r.Body)
			lease, leaseType = b, r.Header.Get("Content-Type")
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
			if l, ok := obj.(*coordinationv1.Lease); err != nil || !ok {
				t.Errorf("a Lease write that is no Lease: %v", err)
			} else {
				for _, f := range onWrite {
					f(ptr.Deref(l.Spec.HolderIdentity, ""))
				}
			}
			w.Header().Set("Content-Type", leaseType)
			_, _ = w.Write(b)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(s.Close)
	return &rest.Config{Host: s.URL}
}

// TestRunWaitsForStop: with WaitForStop, Run returns only once the
// controllers have returned, though that takes longer than ShutdownGrace;
// with and without leader election (where the elector runs the controllers
// in a goroutine it does not wait for). The controller is released well
// after the grace: had Run returned at the grace, it would have returned
// before the controller did.
func TestRunWaitsForStop(t *testing.T) {
	for _, le := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "leader-elect"}[le], func(t *testing.T) {
			c := newSlowStop()
			o := controller.Config{ShutdownGrace: time.Millisecond, WaitForStop: true}
			if le {
				o = electing(o)
			}
			if err := stopWhileStopping(t, fakeAPIServer(t), c, o, 200*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if !c.returned.Load() {
				t.Fatal("Run returned before the controller did")
			}
		})
	}
}

// TestRunReturnsAfterGrace: serve's Run (no WaitForStop) returns once
// ShutdownGrace has passed, though a controller has not stopped: its
// process is about to exit.
func TestRunReturnsAfterGrace(t *testing.T) {
	c := newSlowStop()
	defer close(c.release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, controller.Config{Kubeconfig: fakeAPIServer(t),
			Controllers: []framework.Controller{c}, MetricsAddr: "0", HealthAddr: "0",
			ShutdownGrace: 10 * time.Millisecond,
		})
	}()
	select {
	case <-c.running:
	case err := <-done:
		t.Fatalf("Run returned before the controller ran: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c.returned.Load() {
		t.Fatal("the controller returned, though it was never released")
	}
}

// TestLeaseReleasedAfterTheControllers: on a stop, the Lease is given up
// (its holder cleared, so a standby takes over at once) only after every
// controller has returned: released earlier, a standby could start while
// a controller still finishes its last sync.
func TestLeaseReleasedAfterTheControllers(t *testing.T) {
	c := newSlowStop()
	var mu sync.Mutex
	var early, released bool
	cfg := fakeAPIServer(t, func(holder string) {
		mu.Lock()
		defer mu.Unlock()
		if holder == "" {
			released = true
			early = early || !c.returned.Load()
		}
	})
	// Long enough for a release on cancel, as client-go's elector makes
	// it, to reach the server before the controller returns.
	if err := stopWhileStopping(t, cfg, c, electing(controller.Config{WaitForStop: true}), 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if early {
		t.Fatal("the Lease was released while a controller was still stopping")
	}
	if !released {
		t.Fatal("the Lease was never released")
	}
}

// electing adds leader election on the fake API server's one Lease, with
// serve's default timings.
func electing(o controller.Config) controller.Config {
	o.LeaderElection = election("ns", "lease", 15*time.Second, 10*time.Second, 2*time.Second)
	o.Identity = "me"
	return o
}

// election is component-base's leader-election configuration of a Lease.
func election(ns, name string, lease, renew, retry time.Duration) componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{LeaderElect: true, ResourceNamespace: ns, ResourceName: name,
		LeaseDuration: metav1.Duration{Duration: lease}, RenewDeadline: metav1.Duration{Duration: renew}, RetryPeriod: metav1.Duration{Duration: retry}}
}

// stopWhileStopping runs c under Run with o, stops Run once c runs, lets c
// return after the given delay (a controller finishing a long sync), and
// returns what Run returned.
func stopWhileStopping(t *testing.T, cfg *rest.Config, c *slowStop, o controller.Config, delay time.Duration) error {
	t.Helper()
	o.Controllers, o.MetricsAddr, o.HealthAddr = []framework.Controller{c}, "0", "0"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	o.Kubeconfig = cfg
	go func() { done <- controller.Run(ctx, o) }()
	select {
	case <-c.running:
	case err := <-done:
		t.Fatalf("Run returned before the controller ran: %v", err)
	}
	cancel()
	go func() {
		time.Sleep(delay)
		close(c.release)
	}()
	return <-done
}
