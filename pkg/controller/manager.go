// Package controller runs the controllers of 'kubectl vc serve': shared
// informers, events, metrics and health endpoints, and leader election.
// options.go holds its flags and the Config they complete into; this file
// the run loop; leader.go the leader election; servers.go the HTTP
// endpoints and their certificate; progress.go and health.go what the log
// and /healthz say of a start that waits.
package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcscheme "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/scheme"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
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
	o = o.withDefaults()
	grace := o.ShutdownGrace
	logger := klog.FromContext(ctx)
	p := &progress{logger: logger, server: hostOf(o.Kubeconfig), health: newHealth(o.CacheSyncTimeout)}
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
		logger.Info("stopping without waiting any longer", "waitedFor", what, "grace", grace)
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
	webhooksOnly := len(ctrls) == 0 && !disabled(o.WebhookAddr) && len(o.Webhooks) > 0
	if len(ctrls) == 0 && !webhooksOnly {
		return errors.New("no controllers to run") // Options.Complete selects every one by default
	}
	for _, c := range ctrls {
		if pf, ok := c.(framework.Preflighter); ok {
			if err := pf.Preflight(); err != nil {
				return fmt.Errorf("controller %s cannot start: %w", c.Name(), err)
			}
		}
	}
	if err := o.Validate(); err != nil {
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

	p.logger.Info("starting", "apiServer", p.server, "controllers", names(ctrls), "leaderElect", o.LeaderElection.LeaderElect)
	go p.report(ctx, ProgressPeriod)
	if err := firstContact(ctx, kube, p, FirstContactTimeout); err != nil {
		return nil // ctx ended: a clean stop
	}

	// The webhooks answer on every replica, the standby included, so
	// they start before the lease is sought; readiness follows them.
	webhooks, err := startWebhooks(ctx, o, vc, p)
	if err != nil {
		if ctx.Err() != nil {
			return nil // ctx ended while a cache filled: a clean stop
		}
		return err
	}
	if webhooks != nil {
		servers = append(servers, webhooks)
	}
	if webhooksOnly {
		// A run of webhooks alone (a test's, or a replica set up to answer
		// admission only) has no lease to seek and nothing else to wait for.
		ready.Store("ok")
		<-ctx.Done()
		return nil
	}

	run := func(ctx context.Context) error {
		return runControllers(ctx, kube, vc, reg, ctrls, o, &ready, p)
	}
	if le := o.LeaderElection; !le.LeaderElect {
		if le.ResourceNamespace != "" && le.ResourceName != "" {
			go warnOtherServe(ctx, kube, le.ResourceNamespace, le.ResourceName, time.Minute)
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
	// Each controller logs through a logger named after it (its lines say
	// logger="queue"), handed down in its context as client-go's
	// contextual logging does.
	logger := klog.FromContext(ctx)
	ctxs := make([]context.Context, len(ctrls))
	for i, c := range ctrls {
		ctxs[i] = klog.NewContext(ctx, klog.LoggerWithName(logger, c.Name()))
	}
	for i, c := range ctrls {
		// Initializing may ask the API server what it serves (the NodeSet
		// controller's discovery).
		p.wait("the " + c.Name() + " controller to initialize")
		if err := c.Initialize(ctxs[i], opt); err != nil {
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
	// The podgroup rows both podgroup-reading controllers share.
	if !cache.WaitForCacheSync(stop, opt.StartShared(stop)...) {
		return cacheErr(ctx, "the podgroup rows")
	}
	p.done()
	p.health.cachesSynced()
	ready.Store("ok")
	logger.Info("caches synced, starting controllers", "controllers", names(ctrls))

	var wg sync.WaitGroup
	for i, c := range ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctxs[i])
			// A controller's loop that ends while serve runs leaves its
			// objects unattended: /healthz says so, and kubelet restarts
			// serve.
			if ctx.Err() == nil {
				logger.Error(nil, "controller stopped while serve runs", "controller", c.Name())
				p.health.fail("the " + c.Name() + " controller stopped")
			}
		}()
	}
	wg.Wait()
	logger.Info("controllers stopped")
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
