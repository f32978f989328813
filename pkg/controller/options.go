package controller

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/component-base/featuregate"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// Options are serve's command line: the two steps from it to what each
// controller receives are Complete (Options -> Config, the one run of the
// manager) and the manager's framework.ControllerOption (Config -> each
// controller, with the clients and informers it makes). The flags that
// configure the run are bound straight to the Config's fields, so that each
// setting has one name from the flag to the manager; Options itself holds
// only what the command line says in other terms (controller names, the
// client's rate limits, the log's verbosity) and every controller's own
// flags. They are here, beside the manager that reads them, so that
// serve's command only wires them to cobra.
type Options struct {
	// Config is what the flags set of the run; Complete adds the
	// Kubeconfig and the selected Controllers.
	Config Config

	Controllers  []string
	KubeAPIQPS   float32
	KubeAPIBurst int
	// Verbosity is klog's -v: 0 says what serve waits for and each
	// controller's start; 2 adds retried syncs; 4 and more client-go's
	// own detail (requests, leader election attempts), each line of a sync
	// naming its controller and object. The process that owns the log
	// applies it (serve's command).
	Verbosity int32

	gates featuregate.MutableFeatureGate
	// all holds one instance of every registered controller; each declares
	// its own flags (framework.Controller.AddFlags), so the manager knows
	// none of them.
	all []framework.Controller
}

// NewOptions returns the options at their defaults, with a fresh instance of
// every controller registered so far (the plugins register from init).
func NewOptions() *Options {
	gates := framework.NewFeatureGate()
	o := &Options{
		KubeAPIQPS: -1,
		gates:      gates,
		Config: Config{
			MaxRequeueNum:    15,
			MetricsAddr:      ":8443",
			SecureMetrics:    true,
			HealthAddr:       ":8081",
			WebhookAddr:      "0",
			CacheSyncTimeout: DefaultCacheSyncTimeout,
			FeatureGates:     gates,
			LeaderElection: componentbaseconfig.LeaderElectionConfiguration{
				ResourceLock:      resourcelock.LeasesResourceLock,
				ResourceNamespace: keys.VolcanoNamespace,
				ResourceName:      keys.ServeName,
				LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
				RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
				RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
			},
		},
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
	c, le := &o.Config, &o.Config.LeaderElection
	fl.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf("Controllers to run (default: all of %s)", strings.Join(framework.Names(), ",")))
	fl.IntVar(&c.MaxRequeueNum, "max-requeue-num", c.MaxRequeueNum, "Retries of a failing request before it is dropped with a Warning event (-1: forever)")
	fl.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Client-side QPS limit towards the API server; negative disables it and leaves flow control to the server's API Priority and Fairness")
	fl.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Client-side burst; used only with a positive --kube-api-qps")
	fl.StringVar(&c.MetricsAddr, "metrics-bind-address", c.MetricsAddr, "Address of the Prometheus /metrics endpoint (0 disables it)")
	fl.BoolVar(&c.SecureMetrics, "metrics-secure", c.SecureMetrics, "Serve the metrics address over HTTPS, each request's bearer token checked with a TokenReview and its right to GET the path with a SubjectAccessReview; false: plain HTTP for anyone who can reach the address (local use)")
	fl.StringVar(&c.MetricsCertDir, "metrics-cert-dir", c.MetricsCertDir, "Directory with tls.crt and tls.key of the metrics endpoint (e.g. a cert-manager Secret), read again when they change; default: a self-signed certificate made at start")
	fl.StringVar(&c.WebhookAddr, "webhook-bind-address", c.WebhookAddr, "Address of the admission webhook for queue writes (index mode, docs/admission.md), always HTTPS; 0 disables it")
	fl.StringVar(&c.WebhookCertDir, "webhook-cert-dir", c.WebhookCertDir, "Directory with tls.crt and tls.key of the webhook (the Secret 'install --serve' makes), read again when they change; needed with --webhook-bind-address")
	fl.StringVar(&c.HealthAddr, "health-probe-bind-address", c.HealthAddr, "Address of /healthz and /readyz, always plain HTTP (0 disables them)")
	fl.DurationVar(&c.CacheSyncTimeout, "cache-sync-timeout", c.CacheSyncTimeout, "How long the informer caches may take to fill (RBAC refusing a list never lets them) before /healthz fails, so that kubelet restarts serve")
	fl.BoolVar(&c.Profiling, "profiling", c.Profiling, "Serve Go's pprof profiles under /debug/pprof/ on the metrics address, behind the same checks as /metrics")
	fl.Int32VarP(&o.Verbosity, "v", "v", o.Verbosity, "Log verbosity: 2 adds retried syncs, 4 and more client-go's requests and leader-election attempts")
	// The leader-election flags are component-base's names for the
	// fields of its LeaderElectionConfiguration (the lock is always a Lease).
	fl.BoolVar(&le.LeaderElect, "leader-elect", le.LeaderElect, "Act only while holding a Lease, so that several replicas never act at once")
	fl.StringVar(&le.ResourceNamespace, "leader-elect-resource-namespace", le.ResourceNamespace, "Namespace of the leader-election Lease")
	fl.StringVar(&le.ResourceName, "leader-elect-resource-name", le.ResourceName, "Name of the leader-election Lease")
	fl.StringVar(&c.Identity, "leader-elect-identity", c.Identity, "Holder identity in the Lease (default: hostname and a random suffix)")
	fl.DurationVar(&le.LeaseDuration.Duration, "leader-elect-lease-duration", le.LeaseDuration.Duration, "How long a standby waits after the last renewal before taking the lease")
	fl.DurationVar(&le.RenewDeadline.Duration, "leader-elect-renew-deadline", le.RenewDeadline.Duration, "How long the leader retries renewing before it gives up leadership")
	fl.DurationVar(&le.RetryPeriod.Duration, "leader-elect-retry-period", le.RetryPeriod.Duration, "Interval between attempts to acquire or renew the lease")
	o.gates.AddFlag(fl)
	for _, ctrl := range o.all {
		ctrl.AddFlags(fl)
	}
}

// Validate checks the flags before anything starts: those of the command
// line only here, the run's through Config.Validate, which Run applies to
// a Config written directly too. Each error is one line for the user,
// naming the flag.
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
	if o.Verbosity < 0 {
		return fmt.Errorf("-v must be 0 or more, got %d", o.Verbosity)
	}
	if o.KubeAPIQPS > 0 && o.KubeAPIBurst < 1 {
		return fmt.Errorf("--kube-api-burst must be at least 1 with --kube-api-qps=%g", o.KubeAPIQPS)
	}
	return o.Config.Validate()
}

// Complete returns the Config of one run: the flags' Config with the
// controllers --controllers names (every registered one when it names
// none), and the client configuration base with the rate limits of
// --kube-api-qps and --kube-api-burst and serve's user agent.
func (o *Options) Complete(base *rest.Config) Config {
	want := sets.New(o.Controllers...)
	c := o.Config
	c.Controllers = nil
	for _, ctrl := range o.all {
		if len(want) == 0 || want.Has(ctrl.Name()) {
			c.Controllers = append(c.Controllers, ctrl)
		}
	}
	c.Kubeconfig = rest.CopyConfig(base)
	c.Kubeconfig.QPS = o.KubeAPIQPS
	c.Kubeconfig.Burst = o.KubeAPIBurst
	c.Kubeconfig.UserAgent = keys.ServeName
	return c
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

	// WebhookAddr is the listen address of the admission webhooks ("" or
	// "0": none), served over HTTPS with the pair in WebhookCertDir (read
	// again when it changes, every MetricsCertReload): the API server
	// must trust it, so there is no self-signed default.
	WebhookAddr    string
	WebhookCertDir string
	// Webhooks are answered on WebhookAddr, on every replica (serve's
	// command gives them all; none without WebhookAddr).
	Webhooks []framework.Webhook

	// LeaderElection is component-base's configuration of it, under its
	// names: ResourceNamespace and ResourceName name the Lease (the lock
	// is always a Lease, whatever ResourceLock says).
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// Identity is the holder identity in the Lease ("": the hostname and a
	// random suffix); component-base's configuration has no field for it.
	Identity string

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

// withDefaults is c with its zero values that mean a default filled in:
// the one place those defaults are applied (Run).
func (c Config) withDefaults() Config {
	if c.CacheSyncTimeout == 0 {
		c.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = DefaultShutdownGrace
	}
	if c.FeatureGates == nil {
		c.FeatureGates = framework.NewFeatureGate()
	}
	return c
}

// Validate holds the rules of a run, for the flags (Options.Validate) and
// for a Config written directly (Run refuses it before it listens or asks
// the API server anything) alike; the errors name the flags.
func (c Config) Validate() error {
	if c.MaxRequeueNum < -1 {
		return fmt.Errorf("--max-requeue-num must be -1 (forever) or at least 0, got %d", c.MaxRequeueNum)
	}
	if c.CacheSyncTimeout <= 0 {
		return fmt.Errorf("--cache-sync-timeout must be positive, got %v", c.CacheSyncTimeout)
	}
	metricsOff := disabled(c.MetricsAddr)
	if c.Profiling && metricsOff {
		return errors.New("--profiling serves on the metrics address: give --metrics-bind-address too")
	}
	if c.Profiling && !c.SecureMetrics {
		return errors.New(ErrProfilingNeedsSecureMetrics)
	}
	if c.SecureMetrics && !metricsOff && c.MetricsAddr == c.HealthAddr {
		return fmt.Errorf("--metrics-bind-address and --health-probe-bind-address are both %s: the metrics are served over HTTPS and the probes over plain HTTP, so give them two addresses (or --metrics-secure=false)", c.MetricsAddr)
	}
	if c.MetricsCertDir != "" && !c.SecureMetrics {
		return errors.New("--metrics-cert-dir is the certificate of HTTPS metrics: it cannot be used with --metrics-secure=false")
	}
	if !disabled(c.WebhookAddr) && c.WebhookCertDir == "" {
		return errors.New("--webhook-bind-address needs --webhook-cert-dir: the API server calls the webhook over HTTPS and must trust its certificate ('kubectl vc install --serve' makes one)")
	}
	if disabled(c.WebhookAddr) && c.WebhookCertDir != "" {
		return errors.New("--webhook-cert-dir is the webhook's certificate: give --webhook-bind-address too")
	}
	if !disabled(c.WebhookAddr) && (c.WebhookAddr == c.HealthAddr || c.WebhookAddr == c.MetricsAddr) {
		return fmt.Errorf("--webhook-bind-address %s is already the address of the probes or the metrics: give it one of its own", c.WebhookAddr)
	}
	if le := c.LeaderElection; le.LeaderElect {
		if le.ResourceNamespace == "" || le.ResourceName == "" {
			return errors.New("--leader-elect needs --leader-elect-resource-namespace and --leader-elect-resource-name")
		}
		if !(le.LeaseDuration.Duration > le.RenewDeadline.Duration && le.RenewDeadline.Duration > le.RetryPeriod.Duration && le.RetryPeriod.Duration > 0) {
			return errors.New("leader election needs lease-duration > renew-deadline > retry-period > 0")
		}
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
