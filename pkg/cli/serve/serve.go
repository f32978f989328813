// Package serve implements 'kubectl vc serve', the controller manager.
package serve

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"

	// The controllers register themselves with the framework.
	_ "github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// Options holds the flags and inputs of 'serve'.
type Options struct {
	genericiooptions.IOStreams
	Factory util.Factory

	Controllers            []string
	MaxRequeueNum          int
	KubeAPIQPS             float32
	KubeAPIBurst           int
	MetricsBindAddress     string
	HealthProbeBindAddress string
	Profiling              bool
	// MetricsSecure serves the metrics address over HTTPS behind the API
	// server's TokenReview and SubjectAccessReview (docs/security.md).
	MetricsSecure  bool
	MetricsCertDir string
	// Verbosity is klog's -v: 0 says what serve waits for and each
	// controller's start; 2 adds retried syncs; 4 and more client-go's
	// own detail (requests, leader election attempts).
	Verbosity int32

	LeaderElect         bool
	LeaseNamespace      string
	LeaseName           string
	LeaderElectIdentity string
	LeaseDuration       time.Duration
	RenewDeadline       time.Duration
	RetryPeriod         time.Duration
	FeatureGates        featuregate.MutableFeatureGate

	// all holds one instance of every registered controller; each declared
	// its own flags on the command, so serve knows none of them.
	all      []framework.Controller
	selected []framework.Controller
	// config is the client configuration of the manager, with the
	// client-side rate limits of --kube-api-qps and --kube-api-burst.
	config *rest.Config
}

// NewCmd returns the 'serve' command.
func NewCmd(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Factory: f, FeatureGates: framework.NewFeatureGate()}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Volcano queue (and other) controllers",
		Long: templates.LongDesc(`
			Run, in this process, the controllers that act on Volcano resources: the queue
			controller keeps queue status (state and podgroup counts) and applies the
			open/close Commands that 'queue open' and 'queue close' create.

			Run it instead of Volcano's controller manager, not next to it. In a cluster,
			run it as the Deployment that 'kubectl vc install --serve' applies, with
			--leader-elect: it runs all three controllers. The nodeset controller reaches
			each NodeSet's Slurm through slurmrestd, found as Slinky's operator finds it
			(the NodeSet's Controller, the RestApi naming it, its Service's cluster IP, and
			the JWT key in the Secret the Controller names) only in the namespaces
			--slurm-namespaces names, or at --slurm-rest-url with
			--slurm-jwt-key-file or --slurm-token-file. Outside Slinky it can also run
			Slurm's commands (scontrol, sinfo, squeue) where they and the munge key are
			(--slurm-conf). Where the cluster serves no NodeSets it waits quietly. It stops
			cleanly on SIGTERM or SIGINT.

			Its garbage collector runs at GOGC=50 unless GOGC is set in its environment:
			a lower peak for the caches it fills at start, at no measured cost in time.`),
		Example: templates.Examples(`
			# Run every controller against the current kubeconfig context
			kubectl vc serve

			# Only the queue controller, 4 workers, metrics on :9090
			kubectl vc serve --controllers=queue --workers-queue=4 --metrics-bind-address=:9090

			# On a laptop: metrics over plain HTTP, for anyone who can reach the port
			kubectl vc serve --metrics-secure=false --metrics-bind-address=127.0.0.1:8080

			# Beside Slinky: act on the Slurm of the NodeSets in namespace slurm
			kubectl vc serve --slurm-namespaces=slurm

			# Only the nodeset controller, for a slurmrestd outside Slinky
			kubectl vc serve --controllers=nodeset --slurm-rest-url http://slurm.example:6820 --slurm-jwt-key-file /etc/slurm/jwt_hs256.key

			# Only the nodeset controller, on a Slurm login node, with Slurm's commands
			kubectl vc serve --controllers=nodeset --slurm-conf /etc/slurm/slurm.conf --leader-elect --leader-elect-resource-name=kubectl-vc-serve-nodeset

			# Two replicas, one active: leader election on a Lease
			kubectl vc serve --leader-elect --leader-elect-resource-namespace=volcano-system

			# Ignore Commands (Volcano's QueueCommandSync gate)
			kubectl vc serve --feature-gates=QueueCommandSync=false`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return o.Run(ctx)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Controllers, "controllers", nil, fmt.Sprintf("Controllers to run (default: all of %s)", strings.Join(framework.Names(), ",")))
	fl.IntVar(&o.MaxRequeueNum, "max-requeue-num", 15, "Retries of a failing request before it is dropped with a Warning event (-1: forever)")
	fl.Float32Var(&o.KubeAPIQPS, "kube-api-qps", -1, "Client-side QPS limit towards the API server; negative disables it and leaves flow control to the server's API Priority and Fairness")
	fl.IntVar(&o.KubeAPIBurst, "kube-api-burst", 0, "Client-side burst; used only with a positive --kube-api-qps")
	fl.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8443", "Address of the Prometheus /metrics endpoint (0 disables it)")
	fl.BoolVar(&o.MetricsSecure, "metrics-secure", true, "Serve the metrics address over HTTPS, each request's bearer token checked with a TokenReview and its right to GET the path with a SubjectAccessReview; false: plain HTTP for anyone who can reach the address (local use)")
	fl.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key of the metrics endpoint (e.g. a cert-manager Secret), read again when they change; default: a self-signed certificate made at start")
	fl.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz, always plain HTTP (0 disables them)")
	fl.BoolVar(&o.Profiling, "profiling", false, "Serve Go's pprof profiles under /debug/pprof/ on the metrics address, behind the same checks as /metrics")
	fl.Int32VarP(&o.Verbosity, "v", "v", 0, "Log verbosity: 2 adds retried syncs, 4 and more client-go's requests and leader-election attempts")
	fl.BoolVar(&o.LeaderElect, "leader-elect", false, "Act only while holding a Lease, so that several replicas never act at once")
	fl.StringVar(&o.LeaseNamespace, "leader-elect-resource-namespace", "volcano-system", "Namespace of the leader-election Lease")
	fl.StringVar(&o.LeaseName, "leader-elect-resource-name", "kubectl-vc-serve", "Name of the leader-election Lease")
	fl.StringVar(&o.LeaderElectIdentity, "leader-elect-identity", "", "Holder identity in the Lease (default: hostname and a random suffix)")
	fl.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits after the last renewal before taking the lease")
	fl.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader retries renewing before it gives up leadership")
	fl.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "Interval between attempts to acquire or renew the lease")
	o.FeatureGates.AddFlag(fl)
	for _, n := range framework.Names() {
		c, err := framework.New(n)
		if err != nil {
			panic(err) // a registered name always makes a controller
		}
		c.AddFlags(fl)
		o.all = append(o.all, c)
	}
	return cmd
}

// Complete picks the controllers --controllers names (all by default) and
// resolves the client configuration.
func (o *Options) Complete() error {
	want := sets.New(o.Controllers...)
	o.selected = nil
	for _, c := range o.all {
		if len(want) == 0 || want.Has(c.Name()) {
			o.selected = append(o.selected, c)
		}
	}
	cfg, err := o.Factory.ToRESTConfig()
	if err != nil {
		return err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = o.KubeAPIQPS
	cfg.Burst = o.KubeAPIBurst
	cfg.UserAgent = controller.Component
	o.config = cfg
	return nil
}

// Validate checks the flags before anything starts.
func (o *Options) Validate() error {
	known := sets.New(framework.Names()...)
	for _, c := range o.Controllers {
		if !known.Has(c) {
			return util.UsageErrorf("unknown controller %q in --controllers: known are %s", c, strings.Join(sets.List(known), ","))
		}
	}
	// Every controller's flags are checked, selected or not: a bad value
	// is a mistake whichever controllers run.
	for _, c := range o.all {
		if err := c.Validate(); err != nil {
			return util.UsageErrorf("%s", err)
		}
	}
	if o.MaxRequeueNum < -1 {
		return util.UsageErrorf("--max-requeue-num must be -1 (forever) or at least 0, got %d", o.MaxRequeueNum)
	}
	if o.Verbosity < 0 {
		return util.UsageErrorf("-v must be 0 or more, got %d", o.Verbosity)
	}
	if o.KubeAPIQPS > 0 && o.KubeAPIBurst < 1 {
		return util.UsageErrorf("--kube-api-burst must be at least 1 with --kube-api-qps=%g", o.KubeAPIQPS)
	}
	metricsOff := o.MetricsBindAddress == "" || o.MetricsBindAddress == "0"
	if o.Profiling && metricsOff {
		return util.UsageErrorf("--profiling serves on the metrics address: give --metrics-bind-address too")
	}
	if o.MetricsSecure && !metricsOff && o.MetricsBindAddress == o.HealthProbeBindAddress {
		return util.UsageErrorf("--metrics-bind-address and --health-probe-bind-address are both %s: the metrics are served over HTTPS and the probes over plain HTTP, so give them two addresses (or --metrics-secure=false)", o.MetricsBindAddress)
	}
	if o.MetricsCertDir != "" && !o.MetricsSecure {
		return util.UsageErrorf("--metrics-cert-dir is the certificate of HTTPS metrics: it cannot be used with --metrics-secure=false")
	}
	if o.LeaderElect {
		if o.LeaseNamespace == "" || o.LeaseName == "" {
			return util.UsageErrorf("--leader-elect needs --leader-elect-resource-namespace and --leader-elect-resource-name")
		}
		if !(o.LeaseDuration > o.RenewDeadline && o.RenewDeadline > o.RetryPeriod && o.RetryPeriod > 0) {
			return util.UsageErrorf("leader election needs lease-duration > renew-deadline > retry-period > 0")
		}
	}
	return nil
}

// gcPercent is serve's garbage collection target unless GOGC is set in its
// environment. Nearly all of serve's live heap is its caches, filled in one
// burst at start and long-lived after; at Go's default of 100 the heap may
// grow to twice that before a collection, and that headroom is most of the
// peak. At 50 the peak of a cold start over 1 000 queues and 20 000
// podgroups is 10 MiB lower (87 against 97 MiB) and the time to every
// status right is the same (docs/benchmarks.md); collections are more
// frequent, each as cheap as before.
const gcPercent = 50

// Run starts the manager and blocks until ctx is cancelled.
func (o *Options) Run(ctx context.Context) error {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	setMemoryLimit() // memlimit.go
	// klog's flags live on a flag set of their own, made here and not at
	// start-up: only serve logs through klog at length.
	var kfs flag.FlagSet
	klog.InitFlags(&kfs)
	if err := kfs.Set("v", strconv.Itoa(int(o.Verbosity))); err != nil {
		return err
	}
	err := controller.Run(ctx, o.config, controller.Options{
		Controllers:    o.selected,
		MaxRequeueNum:  o.MaxRequeueNum,
		FeatureGates:   o.FeatureGates,
		MetricsAddr:    o.MetricsBindAddress,
		HealthAddr:     o.HealthProbeBindAddress,
		Profiling:      o.Profiling,
		SecureMetrics:  o.MetricsSecure,
		MetricsCertDir: o.MetricsCertDir,
		LeaderElect:    o.LeaderElect,
		LeaseNamespace: o.LeaseNamespace,
		LeaseName:      o.LeaseName,
		Identity:       o.LeaderElectIdentity,
		LeaseDuration:  o.LeaseDuration,
		RenewDeadline:  o.RenewDeadline,
		RetryPeriod:    o.RetryPeriod,
	})
	if err == nil {
		fmt.Fprintln(o.ErrOut, "serve: stopped")
	}
	return err
}
