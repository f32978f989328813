// Package controller runs the controllers of 'kubectl vc serve': shared
// informers, events, metrics and health endpoints, and leader election.
package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcscheme "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/scheme"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/securemetrics"
)

// Run runs the selected controllers until ctx is cancelled (SIGTERM) or, with
// leader election, until the lease is lost. It returns nil on a clean stop.
//
// Once ctx is cancelled it returns within o.ShutdownGrace (default
// DefaultShutdownGrace) whatever it was doing: workers finish their current
// item in that time, and a step stuck on an unreachable API server (a
// discovery call, the Lease release) is left behind, since the process is
// about to exit anyway. A kubelet that waits 30 s before SIGKILL, and an
// operator at a terminal, are both better served by a prompt exit. With
// o.WaitForStop it waits instead until all of that has returned.
func Run(ctx context.Context, o Config) error {
	grace := o.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	p := &progress{server: hostOf(o.Kubeconfig), health: newHealth(o.CacheSyncTimeout)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, o, p) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if o.WaitForStop {
		return <-done
	}
	select {
	case err := <-done:
		return err
	case <-time.After(grace):
		what, _ := p.current()
		if what == "" {
			what = "the controllers to stop"
		}
		klog.InfoS("stopping without waiting any longer", "waitedFor", what, "grace", grace)
		return nil
	}
}

// DefaultShutdownGrace bounds how long Run waits, after its context ends,
// for the controllers and the manager to stop.
const DefaultShutdownGrace = 5 * time.Second

// FirstContactTimeout bounds each try of the manager's first request to the
// API server (GET /version); a try that fails is logged with its cause.
// ProgressPeriod is how often the log repeats what the manager still waits
// for. (Exported for the tests that hold serve's log to them.)
const (
	FirstContactTimeout = 5 * time.Second
	ProgressPeriod      = 10 * time.Second
)

func run(ctx context.Context, o Config, p *progress) error {
	ctrls := o.Controllers
	if len(ctrls) == 0 {
		return errors.New("no controllers to run") // Options.Complete selects every one by default
	}
	for _, c := range ctrls {
		if pf, ok := c.(framework.Preflighter); ok {
			if err := pf.Preflight(); err != nil {
				return fmt.Errorf("controller %s cannot start: %w", c.Name(), err)
			}
		}
	}
	if o.FeatureGates == nil {
		o.FeatureGates = framework.NewFeatureGate()
	}

	if err := checkEndpoints(o.MetricsAddr, o.HealthAddr, o.SecureMetrics, o.Profiling); err != nil {
		return err
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	requests := newRequestCounterVec()
	reg.MustRegister(requests)

	cfg := rest.CopyConfig(o.Kubeconfig)
	if cfg.UserAgent == "" || cfg.UserAgent == rest.DefaultKubernetesUserAgent() {
		cfg.UserAgent = keys.ServeName
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &requestCounter{next: rt, total: requests} })
	clientset, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Secrets are read with a logger that never logs their bodies.
	var kube kubernetes.Interface = quietSecrets{clientset}
	vc, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}

	var ready atomic.Value // string: "" until ready, else the reason shown
	ready.Store("")
	servers, err := startServers(ctx, o, reg, &ready, p.health, kube)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.Shutdown(sctx)
			cancel()
		}
	}()

	klog.InfoS("starting", "apiServer", p.server, "controllers", names(ctrls), "leaderElect", o.LeaderElect)
	go p.report(ctx, ProgressPeriod)
	if err := firstContact(ctx, kube, p, FirstContactTimeout); err != nil {
		return nil // ctx ended: a clean stop
	}

	run := func(ctx context.Context) error {
		return runControllers(ctx, kube, vc, reg, ctrls, o, &ready, p)
	}
	if !o.LeaderElect {
		if o.LeaseNamespace != "" && o.LeaseName != "" {
			go warnOtherServe(ctx, kube, o.LeaseNamespace, o.LeaseName, time.Minute)
		}
		return run(ctx)
	}
	return runWithLeaderElection(ctx, kube, o, &ready, p, run)
}

func runControllers(ctx context.Context, kube kubernetes.Interface, vc versioned.Interface, reg *prometheus.Registry,
	ctrls []framework.Controller, o Config, ready *atomic.Value, p *progress) error {
	// The caches keep only what the running controllers read: with
	// --controllers=queue the pods are not even watched, and a pod cached
	// for the podgroup controller keeps its resources but not its env.
	trim := framework.CacheTransform(ctrls...)
	kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTransform(trim))
	vcFactory := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, vcinformers.WithTransform(trim))
	fieldFactories := framework.NewFieldInformers(kube, kubeinformers.WithTransform(trim))

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := vcscheme.AddToScheme(scheme); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	defer broadcaster.Shutdown()

	opt := &framework.ControllerOption{
		KubeClient:             kube,
		VolcanoClient:          vc,
		KubeInformerFactory:    kubeFactory,
		VolcanoInformerFactory: vcFactory,
		FieldInformers:         fieldFactories,
		Recorder:               broadcaster.NewRecorder(scheme, corev1.EventSource{Component: keys.ServeName}),
		MetricsRegistry:        reg,
		WorkqueueMetrics:       newWorkqueueMetrics(reg),
		MaxRequeueNum:          o.MaxRequeueNum,
		FeatureGates:           o.FeatureGates,
		Running:                ctrls,
	}
	for _, c := range ctrls {
		// Initializing may ask the API server what it serves (the NodeSet
		// controller's discovery).
		p.wait("the " + c.Name() + " controller to initialize")
		if err := c.Initialize(ctx, opt); err != nil {
			return fmt.Errorf("initialize controller %s: %w", c.Name(), err)
		}
	}
	p.wait("the informer caches to fill (list and watch of every cached kind)")
	p.health.cachesWaiting()
	defer p.done()
	stop := ctx.Done()
	kubeFactory.Start(stop)
	vcFactory.Start(stop)
	fieldFactories.Start(stop)
	// Factories are shut down after the workers have returned, so no worker
	// reads a lister whose informer is gone.
	defer kubeFactory.Shutdown()
	defer vcFactory.Shutdown()
	defer fieldFactories.Shutdown()
	for t, ok := range kubeFactory.WaitForCacheSync(stop) {
		if !ok {
			return cacheErr(ctx, t)
		}
	}
	for t, ok := range vcFactory.WaitForCacheSync(stop) {
		if !ok {
			return cacheErr(ctx, t)
		}
	}
	for t, ok := range fieldFactories.WaitForCacheSync(stop) {
		if !ok {
			return cacheErr(ctx, t)
		}
	}
	p.done()
	p.health.cachesSynced()
	ready.Store("ok")
	klog.InfoS("caches synced, starting controllers", "controllers", names(ctrls))

	var wg sync.WaitGroup
	for _, c := range ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctx)
			// A controller's loop that ends while serve runs leaves its
			// objects unattended: /healthz says so, and kubelet restarts
			// serve.
			if ctx.Err() == nil {
				klog.ErrorS(nil, "controller stopped while serve runs", "controller", c.Name())
				p.health.fail("the " + c.Name() + " controller stopped")
			}
		}()
	}
	wg.Wait()
	klog.InfoS("controllers stopped")
	if ctx.Err() == nil {
		// Every loop ended by itself: exit non-zero, to be restarted.
		return errors.New("every controller stopped while serve runs")
	}
	return nil
}

func cacheErr(ctx context.Context, t any) error {
	if ctx.Err() != nil {
		return nil // stopped while syncing: a clean stop
	}
	return fmt.Errorf("cache of %v did not sync", t)
}

func names(ctrls []framework.Controller) []string {
	out := make([]string, len(ctrls))
	for i, c := range ctrls {
		out[i] = c.Name()
	}
	return out
}

func runWithLeaderElection(ctx context.Context, kube kubernetes.Interface, o Config, ready *atomic.Value, p *progress,
	run func(context.Context) error) error {
	id := o.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = host + "_" + uuid.NewString()
	}
	lock := &heldLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaseNamespace, Name: o.LeaseName},
		Client:     kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}}
	// A standby replica is healthy and ready: it is doing its job, which is
	// to wait for the lease.
	ready.Store("ok: standby, waiting for the lease")
	p.wait(fmt.Sprintf("the leader-election Lease %s/%s (a standby acts once it holds it)", o.LeaseNamespace, o.LeaseName))
	var (
		mu     sync.Mutex // runErr is written by the elector's goroutine
		runErr error
		lost   atomic.Bool
	)
	// leading is closed when OnStartedLeading returns. The elector runs
	// that callback in a goroutine of its own, once it has written the
	// Lease as its holder, and does not wait for it. Whether it was started
	// at all is told by the lock (heldLock): the goroutine may not have
	// begun when le.Run returns.
	leading := make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchdog := leaderelection.NewLeaderHealthzAdaptor(leaderHealthTimeout)
	p.health.setLeader(watchdog)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		WatchDog:      watchdog,
		Name:          keys.ServeName,
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.RenewDeadline,
		RetryPeriod:   o.RetryPeriod,
		// Not released by the elector when ctx ends: it would release while
		// the controllers are still stopping, and a standby could act beside
		// them. releaseLease does it once they have returned.
		ReleaseOnCancel: false,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				defer close(leading)
				p.done()
				klog.InfoS("became leader", "identity", id, "lease", o.LeaseNamespace+"/"+o.LeaseName)
				ready.Store("")
				err := run(lctx)
				mu.Lock()
				runErr = err
				mu.Unlock()
				// Leadership is given up only once the controllers have
				// stopped, so two replicas never act at the same time.
				cancel()
			},
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					lost.Store(true)
					p.health.fail("lost the leader-election Lease")
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(runCtx)
	// Once ctx has ended, the controllers are waited for (within Run's
	// grace, unless WaitForStop). A lost Lease is not waited on: the other
	// replica may act already, and serve exits at once.
	if lock.held.Load() && (o.WaitForStop || !lost.Load()) {
		<-leading
	}
	if lock.held.Load() && !lost.Load() {
		if err := releaseLease(lock.Interface, id, o.RenewDeadline); err != nil {
			klog.InfoS("the leader-election Lease was not released; a standby takes it once it expires", "lease", o.LeaseNamespace+"/"+o.LeaseName, "err", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if runErr != nil {
		return runErr
	}
	if lost.Load() && ctx.Err() == nil {
		return errors.New("lost the leader-election lease; exiting so that the other replica acts alone")
	}
	return nil
}

// releaseLease gives up the Lease, as client-go's elector does on cancel
// (no holder, a 1 s duration), but only once the controllers have stopped,
// and only if it still names id. Its own timeout: ctx has ended by now.
func releaseLease(lock resourcelock.Interface, id string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rec, _, err := lock.Get(ctx)
	if err != nil {
		return err
	}
	if rec.HolderIdentity != id {
		return nil
	}
	now := metav1.NewTime(time.Now())
	return lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now,
	})
}

// heldLock is a leader-election lock that remembers whether it ever wrote
// the Lease with this process as the holder: the elector starts
// OnStartedLeading exactly when such a write succeeded.
type heldLock struct {
	resourcelock.Interface
	held atomic.Bool
}

func (l *heldLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, r)
	l.record(r, err)
	return err
}

func (l *heldLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, r)
	l.record(r, err)
	return err
}

func (l *heldLock) record(r resourcelock.LeaderElectionRecord, err error) {
	if err == nil && r.HolderIdentity != "" && r.HolderIdentity == l.Identity() {
		l.held.Store(true)
	}
}

func startServers(ctx context.Context, o Config, reg *prometheus.Registry, ready *atomic.Value, healthz http.Handler, kube kubernetes.Interface) ([]*http.Server, error) {
	var servers []*http.Server
	closeAll := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	listen := func(addr string, h http.Handler, what string, tlsConfig *tls.Config, perRequestWrite bool) error {
		if disabled(addr) {
			return nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		scheme := "http"
		if tlsConfig != nil {
			ln, scheme = tls.NewListener(ln, tlsConfig), "https"
		}
		klog.InfoS("serving", "endpoint", what, "address", ln.Addr().String(), "scheme", scheme)
		s := newServer(h, perRequestWrite)
		servers = append(servers, s)
		go func() { _ = s.Serve(ln) }()
		return nil
	}
	health := http.NewServeMux()
	health.Handle("/healthz", healthz)
	health.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if msg, _ := ready.Load().(string); msg != "" {
			_, _ = w.Write([]byte(msg))
			return
		}
		http.Error(w, "informer caches not synced yet", http.StatusServiceUnavailable)
	})
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	metricsOn := !disabled(o.MetricsAddr)
	// checkEndpoints has refused profiling over plain HTTP and HTTPS
	// metrics on the probes' address.
	if o.Profiling {
		addProfiling(metricsMux)
	}
	if metricsOn && o.MetricsAddr == o.HealthAddr {
		health.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		return servers, listen(o.HealthAddr, health, "health probes and metrics", nil, false)
	}
	if err := listen(o.HealthAddr, health, "health probes", nil, false); err != nil {
		return nil, err
	}
	var metricsHandler http.Handler = metricsMux
	var tlsConfig *tls.Config
	if metricsOn && o.SecureMetrics {
		certs, err := metricsCerts(ctx, o)
		if err != nil {
			closeAll()
			return nil, err
		}
		metricsHandler, tlsConfig = securemetrics.NewFilter(kube).Wrap(metricsMux), certs.TLSConfig()
	}
	if err := listen(o.MetricsAddr, metricsHandler, "metrics", tlsConfig, o.Profiling); err != nil {
		closeAll()
		return nil, err
	}
	return servers, nil
}

// metricsCerts is the certificate of the metrics endpoint: the pair in
// MetricsCertDir, watched for changes, or a self-signed one for this host.
func metricsCerts(ctx context.Context, o Config) (*securemetrics.Certs, error) {
	if o.MetricsCertDir != "" {
		certs, err := securemetrics.LoadDir(o.MetricsCertDir)
		if err != nil {
			return nil, err
		}
		period := o.MetricsCertReload
		if period <= 0 {
			period = 10 * time.Second
		}
		go certs.Watch(ctx, period)
		return certs, nil
	}
	host, _ := os.Hostname()
	hosts := []string{"localhost", "127.0.0.1", "::1", host}
	// The Service install creates, so that a scraper may verify the name
	// against this certificate once it trusts it.
	hosts = append(hosts, MetricsService+"."+Namespace+".svc", MetricsService+"."+Namespace+".svc.cluster.local")
	if ip := os.Getenv("POD_IP"); ip != "" {
		hosts = append(hosts, ip)
	}
	certs, err := securemetrics.SelfSigned(hosts...)
	if err != nil {
		return nil, fmt.Errorf("metrics: making a self-signed certificate: %w", err)
	}
	klog.InfoS("metrics served with a self-signed certificate (give --metrics-cert-dir for one scrapers can verify)", "hosts", hosts)
	return certs, nil
}

// Namespace and MetricsService are where 'install --serve' puts serve and
// the Service in front of its metrics port.
const (
	Namespace      = "volcano-system"
	MetricsService = "kubectl-vc-serve-metrics"
)

// addProfiling serves net/http/pprof's handlers under /debug/pprof/ on mux
// (registered by hand: the package's init registers them on
// http.DefaultServeMux, which serve never listens on).
func addProfiling(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
