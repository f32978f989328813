package controller_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// These tests make a leading manager lose its Lease, to another holder or
// to an API server that stops answering past the renew deadline, and then
// hold it again. The manager does not lead twice in one Run: on a loss its
// Run returns an error and serve exits, so that the other replica acts
// alone, and the restarted pod campaigns afresh. The tests play that
// restart with a second Run in the same process, as the pod's next life,
// and run under -race in make test: the elector's goroutines, the
// controllers' and the manager's own share the loss.

// actor is a controller that caches nothing and acts every few
// milliseconds while it runs (acts counts it), as a worker syncing.
type actor struct {
	running  chan struct{} // closed when Run starts
	returned chan struct{} // closed when Run returns
	acts     atomic.Int64
}

func newActor() *actor {
	return &actor{running: make(chan struct{}), returned: make(chan struct{})}
}

func (a *actor) Name() string                                                  { return "actor" }
func (a *actor) AddFlags(*pflag.FlagSet)                                       {}
func (a *actor) Validate() error                                               { return nil }
func (a *actor) Initialize(context.Context, *framework.ControllerOption) error { return nil }
func (a *actor) CacheReads() []framework.CacheRead                             { return nil }
func (a *actor) Run(ctx context.Context) {
	defer close(a.returned)
	close(a.running)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			a.acts.Add(1)
		}
	}
}

// leaseServer is an API server holding one Lease, as the real one does
// for leader election: created once (409 after), updated only from the
// resourceVersion it holds (409 otherwise), read as JSON. A test can write
// the Lease as another holder, or make the Lease unreachable (503).
type leaseServer struct {
	t      *testing.T
	mu     sync.Mutex
	lease  *coordinationv1.Lease
	rv     int
	down   bool
	writes []string // the holders written, in order
}

const leasePath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases"

func newLeaseServer(t *testing.T) (*leaseServer, *rest.Config) {
	s := &leaseServer{t: t}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, &rest.Config{Host: srv.URL}
}

func (s *leaseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	status := func(code int, reason string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"`+reason+`","code":`+strconv.Itoa(code)+`}`)
	}
	if r.URL.Path == "/version" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"gitVersion":"v0.0.0-fake"}`)
		return
	}
	if !strings.HasPrefix(r.URL.Path, leasePath) {
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		status(http.StatusNotFound, "NotFound")
		return
	}
	if s.down {
		status(http.StatusServiceUnavailable, "ServiceUnavailable")
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == leasePath+"/lease":
		if s.lease == nil {
			status(http.StatusNotFound, "NotFound")
			return
		}
		s.answer(w, s.lease)
	case r.Method == http.MethodPost && r.URL.Path == leasePath, r.Method == http.MethodPut && r.URL.Path == leasePath+"/lease":
		b, _ := io.ReadAll(r.Body)
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
		l, ok := obj.(*coordinationv1.Lease)
		if err != nil || !ok {
			s.t.Errorf("a Lease write that is no Lease: %v", err)
			status(http.StatusBadRequest, "BadRequest")
			return
		}
		switch {
		case r.Method == http.MethodPost && s.lease != nil:
			status(http.StatusConflict, "AlreadyExists")
			return
		case r.Method == http.MethodPut && (s.lease == nil || l.ResourceVersion != s.lease.ResourceVersion):
			status(http.StatusConflict, "Conflict")
			return
		}
		s.store(l)
		s.answer(w, s.lease)
	default:
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		status(http.StatusNotFound, "NotFound")
	}
}

// store keeps l as the Lease at the next resourceVersion; s.mu is held.
func (s *leaseServer) store(l *coordinationv1.Lease) {
	s.rv++
	l = l.DeepCopy()
	l.ResourceVersion = strconv.Itoa(s.rv)
	s.lease = l
	s.writes = append(s.writes, ptr.Deref(l.Spec.HolderIdentity, ""))
}

func (s *leaseServer) answer(w http.ResponseWriter, l *coordinationv1.Lease) {
	l = l.DeepCopy()
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	b, err := json.Marshal(l)
	if err != nil {
		s.t.Errorf("encode the Lease: %v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// takeOver writes the Lease as held by other, renewed now, for duration:
// what another replica does once the Lease has expired for it.
func (s *leaseServer) takeOver(other string, duration time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lease", Namespace: "ns"}}
	if s.lease != nil {
		l = s.lease.DeepCopy()
	}
	l.Spec.HolderIdentity = ptr.To(other)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(duration / time.Second))
	l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
	l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
	s.store(l)
}

func (s *leaseServer) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

func (s *leaseServer) holder() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lease == nil {
		return ""
	}
	return ptr.Deref(s.lease.Spec.HolderIdentity, "")
}

// quickElection is leader election on the fake's one Lease with short
// timings, so that a loss and a takeover take seconds: the Lease lasts
// 2 s, a leader that cannot renew for 1 s gives it up. waitForStop as
// tests set it, or not, as serve runs.
func quickElection(id string, waitForStop bool) controller.Config {
	o := electing(controller.Config{WaitForStop: waitForStop, MetricsAddr: "0", HealthAddr: "0"})
	o.Identity = id
	o.LeaderElection = election("ns", "lease", 2*time.Second, time.Second, 200*time.Millisecond)
	return o
}

// bothWays runs test as serve runs the manager (Run returns at once on a
// loss, its process exits) and as in-process tests run it (WaitForStop:
// Run returns once the controllers have).
// Each runs its own fake API server and Lease, in parallel with the other
// elections (their waits are timers: together they take the longest one).
func bothWays(t *testing.T, test func(t *testing.T, waitForStop bool)) {
	t.Parallel()
	for _, w := range []bool{false, true} {
		t.Run(map[bool]string{false: "serve", true: "WaitForStop"}[w], func(t *testing.T) {
			t.Parallel()
			test(t, w)
		})
	}
}

// startRun runs a manager of a with o until ctx ends or it stops; its
// error comes on the channel.
func startRun(ctx context.Context, cfg *rest.Config, a *actor, o controller.Config) <-chan error {
	o.Controllers = []framework.Controller{a}
	done := make(chan error, 1)
	o.Kubeconfig = cfg
	go func() { done <- controller.Run(ctx, o) }()
	return done
}

// leads waits until a runs and acts under the manager whose Run reports
// on done.
func leads(t *testing.T, a *actor, done <-chan error, within time.Duration) {
	t.Helper()
	select {
	case <-a.running:
	case err := <-done:
		t.Fatalf("Run returned before its controller ran: %v", err)
	case <-time.After(within):
		t.Fatalf("the controller did not start within %v", within)
	}
	for deadline := time.Now().Add(within); a.acts.Load() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the controller acted %d times in %v", a.acts.Load(), within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// losesLeadership waits for the Run reporting on done to end with the
// loss, and checks that its controller returns (with WaitForStop, had
// returned already) and acts no more.
func losesLeadership(t *testing.T, a *actor, done <-chan error, waitForStop bool, within time.Duration) {
	t.Helper()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "lost the leader-election lease") {
			t.Fatalf("Run after losing the Lease returned %v, want the loss", err)
		}
	case <-time.After(within):
		t.Fatalf("Run still leads %v after its Lease was lost", within)
	}
	if waitForStop {
		select {
		case <-a.returned:
		default:
			t.Fatal("Run returned while its controller was still running")
		}
	}
	select {
	case <-a.returned:
	case <-time.After(within):
		t.Fatalf("the controller still runs %v after the loss", within)
	}
	n := a.acts.Load()
	time.Sleep(100 * time.Millisecond)
	if m := a.acts.Load(); m != n {
		t.Fatalf("the controller acted %d more times after the loss", m-n)
	}
}

// TestLeadershipLostAndRegained: a leader whose Lease another replica
// takes (it renews, this one cannot) stops its controllers and exits with
// the loss; once that replica's Lease expires (it stopped renewing), the
// restarted manager takes the Lease and its controllers act again; on
// stop it releases the Lease.
func TestLeadershipLostAndRegained(t *testing.T) { bothWays(t, lostAndRegained) }

func lostAndRegained(t *testing.T, waitForStop bool) {
	srv, cfg := newLeaseServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	first := newActor()
	done := startRun(ctx, cfg, first, quickElection("me", waitForStop))
	leads(t, first, done, 10*time.Second)
	if h := srv.holder(); h != "me" {
		t.Fatalf("the Lease is held by %q while this manager acts", h)
	}

	// Another replica takes over for 3 s: longer than the renew deadline,
	// so that this leader gives up before it could take the Lease back.
	srv.takeOver("other", 3*time.Second)
	losesLeadership(t, first, done, waitForStop, 10*time.Second)

	// The restarted manager waits out the other's Lease, then leads.
	second := newActor()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	done2 := startRun(ctx2, cfg, second, quickElection("me", waitForStop))
	leads(t, second, done2, 20*time.Second)
	if h := srv.holder(); h != "me" {
		t.Fatalf("the Lease is held by %q while the restarted manager acts", h)
	}
	if first.acts.Load() == 0 {
		t.Fatal("the first controller never acted")
	}

	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("a stop after regaining the Lease: %v", err)
	}
	<-second.returned
	if h := srv.holder(); h != "" {
		t.Fatalf("the Lease still names %q after the stop", h)
	}
}

// TestLeadershipLostToAnUnreachableAPIServer: a leader that cannot reach
// the API server past its renew deadline stops its controllers and exits
// (another replica may hold the Lease by then); once the API server
// answers again, the restarted manager leads and its controllers act.
func TestLeadershipLostToAnUnreachableAPIServer(t *testing.T) { bothWays(t, lostToUnreachable) }

func lostToUnreachable(t *testing.T, waitForStop bool) {
	srv, cfg := newLeaseServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	first := newActor()
	done := startRun(ctx, cfg, first, quickElection("me", waitForStop))
	leads(t, first, done, 10*time.Second)

	srv.setDown(true)
	losesLeadership(t, first, done, waitForStop, 10*time.Second)
	srv.setDown(false)

	second := newActor()
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	done2 := startRun(ctx2, cfg, second, quickElection("me-again", waitForStop))
	leads(t, second, done2, 20*time.Second)
	if h := srv.holder(); h != "me-again" {
		t.Fatalf("the Lease is held by %q while the restarted manager acts", h)
	}
	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("a stop after regaining the Lease: %v", err)
	}
}
