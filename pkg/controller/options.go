package controller

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// Options are the flags of the manager, as 'kubectl vc serve' takes them:
// declared by AddFlags, checked by Validate, and turned by Complete into the
// Config that Run takes. They are here, beside the manager that reads them,
// so that serve's command only wires them to cobra.
type Options struct {
	Controllers            []string
	MaxRequeueNum          int
	KubeAPIQPS             float32
	KubeAPIBurst           int
	MetricsBindAddress     string
	HealthProbeBindAddress string
	// CacheSyncTimeout is how long the caches may take to fill before
	// /healthz fails.
	CacheSyncTimeout time.Duration
	Profiling        bool
	// MetricsSecure serves the metrics address over HTTPS behind the API
	// server's TokenReview and SubjectAccessReview (docs/security.md).
	MetricsSecure  bool
	MetricsCertDir string
	// Verbosity is klog's -v: 0 says what serve waits for and each
	// controller's start; 2 adds retried syncs; 4 and more client-go's
	// own detail (requests, leader election attempts). The process that
	// owns the log applies it (serve's command).
	Verbosity int32

	LeaderElect         bool
	LeaseNamespace      string
	LeaseName           string
	LeaderElectIdentity string
	LeaseDuration       time.Duration
	RenewDeadline       time.Duration
	RetryPeriod         time.Duration
	FeatureGates        featuregate.MutableFeatureGate

	// all holds one instance of every registered controller; each declares
	// its own flags (framework.Controller.AddFlags), so the manager knows
	// none of them.
	all []framework.Controller
}

// NewOptions returns the options at their defaults, with a fresh instance of
// every controller registered so far (the plugins register from init).
func NewOptions() *Options {
	o := &Options{
		MaxRequeueNum:          15,
		KubeAPIQPS:             -1,
		MetricsBindAddress:     ":8443",
		MetricsSecure:          true,
		HealthProbeBindAddress: ":8081",
		CacheSyncTimeout:       DefaultCacheSyncTimeout,
		LeaseNamespace:         keys.VolcanoNamespace,
		LeaseName:              keys.ServeName,
		LeaseDuration:          15 * time.Second,
		RenewDeadline:          10 * time.Second,
		RetryPeriod:            2 * time.Second,
		FeatureGates:           framework.NewFeatureGate(),
	}
	for _, n := range framework.Names() {
		c, err := framework.New(n)
		if err != nil {
			panic(err) // a registered name always makes a controller
		}
		o.all = append(o.all, c)
	}
	return o
}

// AddFlags declares the manager's flags and every controller's own on fs.
func (o *Options) AddFlags(fl *pflag.FlagSet) {
	fl.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf("Controllers to run (default: all of %s)", strings.Join(framework.Names(), ",")))
	fl.IntVar(&o.MaxRequeueNum, "max-requeue-num", o.MaxRequeueNum, "Retries of a failing request before it is dropped with a Warning event (-1: forever)")
	fl.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Client-side QPS limit towards the API server; negative disables it and leaves flow control to the server's API Priority and Fairness")
	fl.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Client-side burst; used only with a positive --kube-api-qps")
	fl.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus /metrics endpoint (0 disables it)")
	fl.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "Serve the metrics address over HTTPS, each request's bearer token checked with a TokenReview and its right to GET the path with a SubjectAccessReview; false: plain HTTP for anyone who can reach the address (local use)")
	fl.StringVar(&o.MetricsCertDir, "metrics-cert-dir", o.MetricsCertDir, "Directory with tls.crt and tls.key of the metrics endpoint (e.g. a cert-manager Secret), read again when they change; default: a self-signed certificate made at start")
	fl.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of /healthz and /readyz, always plain HTTP (0 disables them)")
	fl.DurationVar(&o.CacheSyncTimeout, "cache-sync-timeout", o.CacheSyncTimeout, "How long the informer caches may take to fill (RBAC refusing a list never lets them) before /healthz fails, so that kubelet restarts serve")
	fl.BoolVar(&o.Profiling, "profiling", o.Profiling, "Serve Go's pprof profiles under /debug/pprof/ on the metrics address, behind the same checks as /metrics")
	fl.Int32VarP(&o.Verbosity, "v", "v", o.Verbosity, "Log verbosity: 2 adds retried syncs, 4 and more client-go's requests and leader-election attempts")
	fl.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Act only while holding a Lease, so that several replicas never act at once")
	fl.StringVar(&o.LeaseNamespace, "leader-elect-resource-namespace", o.LeaseNamespace, "Namespace of the leader-election Lease")
	fl.StringVar(&o.LeaseName, "leader-elect-resource-name", o.LeaseName, "Name of the leader-election Lease")
	fl.StringVar(&o.LeaderElectIdentity, "leader-elect-identity", o.LeaderElectIdentity, "Holder identity in the Lease (default: hostname and a random suffix)")
	fl.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long a standby waits after the last renewal before taking the lease")
	fl.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "How long the leader retries renewing before it gives up leadership")
	fl.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "Interval between attempts to acquire or renew the lease")
	o.FeatureGates.AddFlag(fl)
	for _, c := range o.all {
		c.AddFlags(fl)
	}
}

// Validate checks the flags before anything starts. Each error is one line
// for the user, naming the flag.
func (o *Options) Validate() error {
	known := sets.New(framework.Names()...)
	for _, c := range o.Controllers {
		if !known.Has(c) {
			return fmt.Errorf("unknown controller %q in --controllers: known are %s", c, strings.Join(sets.List(known), ","))
		}
	}
	// Every controller's flags are checked, selected or not: a bad value
	// is a mistake whichever controllers run.
	for _, c := range o.all {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	if o.MaxRequeueNum < -1 {
		return fmt.Errorf("--max-requeue-num must be -1 (forever) or at least 0, got %d", o.MaxRequeueNum)
	}
	if o.CacheSyncTimeout <= 0 {
		return fmt.Errorf("--cache-sync-timeout must be positive, got %v", o.CacheSyncTimeout)
	}
	if o.Verbosity < 0 {
		return fmt.Errorf("-v must be 0 or more, got %d", o.Verbosity)
	}
	if o.KubeAPIQPS > 0 && o.KubeAPIBurst < 1 {
		return fmt.Errorf("--kube-api-burst must be at least 1 with --kube-api-qps=%g", o.KubeAPIQPS)
	}
	if err := checkEndpoints(o.MetricsBindAddress, o.HealthProbeBindAddress, o.MetricsSecure, o.Profiling); err != nil {
		return err
	}
	if o.MetricsCertDir != "" && !o.MetricsSecure {
		return errors.New("--metrics-cert-dir is the certificate of HTTPS metrics: it cannot be used with --metrics-secure=false")
	}
	if o.LeaderElect {
		if o.LeaseNamespace == "" || o.LeaseName == "" {
			return errors.New("--leader-elect needs --leader-elect-resource-namespace and --leader-elect-resource-name")
		}
		if !(o.LeaseDuration > o.RenewDeadline && o.RenewDeadline > o.RetryPeriod && o.RetryPeriod > 0) {
			return errors.New("leader election needs lease-duration > renew-deadline > retry-period > 0")
		}
	}
	return nil
}

// Complete returns the Config of one run: the controllers --controllers
// names (every registered one when it names none), and the client
// configuration base with the rate limits of --kube-api-qps and
// --kube-api-burst and serve's user agent.
func (o *Options) Complete(base *rest.Config) Config {
	want := sets.New(o.Controllers...)
	var selected []framework.Controller
	for _, c := range o.all {
		if len(want) == 0 || want.Has(c.Name()) {
			selected = append(selected, c)
		}
	}
	kubeconfig := rest.CopyConfig(base)
	kubeconfig.QPS = o.KubeAPIQPS
	kubeconfig.Burst = o.KubeAPIBurst
	kubeconfig.UserAgent = keys.ServeName
	return Config{
		Kubeconfig:       kubeconfig,
		Controllers:      selected,
		MaxRequeueNum:    o.MaxRequeueNum,
		FeatureGates:     o.FeatureGates,
		MetricsAddr:      o.MetricsBindAddress,
		HealthAddr:       o.HealthProbeBindAddress,
		CacheSyncTimeout: o.CacheSyncTimeout,
		Profiling:        o.Profiling,
		SecureMetrics:    o.MetricsSecure,
		MetricsCertDir:   o.MetricsCertDir,
		LeaderElect:      o.LeaderElect,
		LeaseNamespace:   o.LeaseNamespace,
		LeaseName:        o.LeaseName,
		Identity:         o.LeaderElectIdentity,
		LeaseDuration:    o.LeaseDuration,
		RenewDeadline:    o.RenewDeadline,
		RetryPeriod:      o.RetryPeriod,
	}
}

// Config is one run of the manager: what Options.Complete makes for serve,
// and what the tests that run a manager in-process write directly. The
// manager hands the controllers their share of it (framework.ControllerOption:
// the retries and the feature gates, beside the clients it makes).
type Config struct {
	// Kubeconfig reaches the API server.
	Kubeconfig *rest.Config
	// Controllers to run, each configured by its own flags (see
	// framework.Configure); at least one.
	Controllers   []framework.Controller
	MaxRequeueNum int
	// FeatureGates are serve's (nil: their defaults).
	FeatureGates featuregate.FeatureGate

	// MetricsAddr and HealthAddr are listen addresses; "" or "0" disables.
	MetricsAddr string
	HealthAddr  string
	// Profiling adds Go's pprof handlers (/debug/pprof/) to the metrics
	// endpoint: for an operator to see where serve's CPU and memory go
	// in their cluster, which no benchmark here can reproduce.
	Profiling bool
	// SecureMetrics serves the metrics endpoint over HTTPS, each request
	// authenticated (TokenReview) and authorized (SubjectAccessReview: get
	// on the path) by the API server; without it, plain HTTP for anyone.
	// serve sets it by default (--metrics-secure); the zero value is plain
	// HTTP for the tests that run a manager in-process.
	SecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key of the metrics endpoint,
	// read again when they change (every MetricsCertReload, default 10 s);
	// empty: a self-signed certificate made at start.
	MetricsCertDir    string
	MetricsCertReload time.Duration

	LeaderElect    bool
	LeaseNamespace string
	LeaseName      string
	Identity       string
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration

	// CacheSyncTimeout is how long the informer caches may take to fill
	// before /healthz fails (0: DefaultCacheSyncTimeout).
	CacheSyncTimeout time.Duration

	// ShutdownGrace bounds the stop after ctx ends (0: DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// WaitForStop makes Run, once ctx ends, return only when what it
	// started has stopped: the controllers have returned, the informers are
	// shut down, the leader-election loop has ended. That may take longer
	// than ShutdownGrace, which is then not applied. (An Event being sent
	// at that moment may still reach the API server after.) Tests that run
	// a manager in-process set it: a controller left running after its test
	// acts on the next test's objects. serve does not: its process exits
	// right after Run returns, and an operator waits for that.
	WaitForStop bool
}

// checkEndpoints holds the rules of the metrics and health addresses, for
// the flags (Validate) and for a Config written directly (Run) alike.
func checkEndpoints(metricsAddr, healthAddr string, secure, profiling bool) error {
	metricsOff := disabled(metricsAddr)
	if profiling && metricsOff {
		return errors.New("--profiling serves on the metrics address: give --metrics-bind-address too")
	}
	if profiling && !secure {
		return errors.New(ErrProfilingNeedsSecureMetrics)
	}
	if secure && !metricsOff && metricsAddr == healthAddr {
		return fmt.Errorf("--metrics-bind-address and --health-probe-bind-address are both %s: the metrics are served over HTTPS and the probes over plain HTTP, so give them two addresses (or --metrics-secure=false)", metricsAddr)
	}
	return nil
}

// disabled tells a listen address that turns its endpoint off.
func disabled(addr string) bool { return addr == "" || addr == "0" }

// ErrProfilingNeedsSecureMetrics refuses pprof without authentication: a
// heap profile holds what serve's caches hold (names, labels, annotations
// of every cached object), and a CPU profile or trace keeps serve busy.
const ErrProfilingNeedsSecureMetrics = "--profiling serves Go's profiles only over HTTPS behind the API server's token and RBAC checks: " +
	"drop --metrics-secure=false (and give the metrics an address of their own), or drop --profiling"
