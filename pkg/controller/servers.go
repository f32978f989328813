package controller

// The manager's HTTP servers: /healthz and /readyz over plain HTTP, /metrics
// (and pprof) over HTTPS behind the API server's reviews, and the metrics
// certificate. Their timeouts are in timeouts.go.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	runtimepprof "runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/securemetrics"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

func startServers(ctx context.Context, o Config, reg *prometheus.Registry, ready *atomic.Value, healthz http.Handler, kube kubernetes.Interface) ([]*http.Server, error) {
	logger := klog.FromContext(ctx)
	var servers []*http.Server
	closeAll := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	listen := func(addr string, h http.Handler, what string, tlsConfig *tls.Config, perRequestWrite bool, headerBytes int) error {
		if disabled(addr) {
			return nil
		}
		raw, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		// Bounded before TLS: a handshake holds its connection too.
		limited := newLimitListener(raw, maxConns, maxConnsPerAddr)
		var ln net.Listener = limited
		scheme := "http"
		if tlsConfig != nil {
			ln, scheme = tls.NewListener(ln, tlsConfig), "https"
		}
		logger.Info("serving", "endpoint", what, "address", ln.Addr().String(), "scheme", scheme)
		s := newServer(limitRequests(h), perRequestWrite)
		s.MaxHeaderBytes, s.ConnState = headerBytes, limited.connState
		// Requests carry the manager's logger (the metrics filter logs
		// through it), not its cancellation: Shutdown ends them.
		s.BaseContext = func(net.Listener) context.Context { return klog.NewContext(context.Background(), logger) }
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
	// Config.Validate has refused profiling over plain HTTP and HTTPS
	// metrics on the probes' address.
	if o.Profiling {
		addProfiling(metricsMux)
	}
	if metricsOn && o.MetricsAddr == o.HealthAddr {
		health.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		return servers, listen(o.HealthAddr, health, "health probes and metrics", nil, false, healthHeaderBytes)
	}
	if err := listen(o.HealthAddr, health, "health probes", nil, false, healthHeaderBytes); err != nil {
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
		metricsHandler, tlsConfig = securemetrics.NewFilter(kube, servedPaths(o.Profiling)...).Wrap(metricsMux), certs.TLSConfig()
	}
	if err := listen(o.MetricsAddr, metricsHandler, "metrics", tlsConfig, o.Profiling, metricsHeaderBytes); err != nil {
		closeAll()
		return nil, err
	}
	return servers, nil
}

// metricsCerts is the certificate of the metrics endpoint: the pair in
// MetricsCertDir, watched for changes, or a self-signed one for this host.
func metricsCerts(ctx context.Context, o Config) (*securemetrics.Certs, error) {
	if o.MetricsCertDir != "" {
		return watchedCerts(ctx, o, "--metrics-cert-dir", "metrics", o.MetricsCertDir)
	}
	hosts := selfSignedHosts()
	certs, err := securemetrics.SelfSigned(hosts...)
	if err != nil {
		return nil, fmt.Errorf("metrics: making a self-signed certificate: %w", err)
	}
	klog.FromContext(ctx).Info("metrics served with a self-signed certificate (give --metrics-cert-dir for one scrapers can verify)", "hosts", hosts)
	return certs, nil
}

// watchedCerts loads the pair in dir (flag and what name it in errors and
// the log) and reads it again every o.MetricsCertReload (default 10 s)
// until ctx ends.
func watchedCerts(ctx context.Context, o Config, flag, what, dir string) (*securemetrics.Certs, error) {
	certs, err := securemetrics.LoadFlagDir(flag, what, dir)
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

// selfSignedHosts are the names and addresses a self-signed metrics
// certificate holds: this host's, the pod's address (POD_IP), and the
// metrics Service that install creates in serve's namespace, so that a
// scraper may verify the name once it trusts the certificate.
func selfSignedHosts() []string {
	host, _ := os.Hostname()
	hosts := []string{"localhost", "127.0.0.1", "::1", host}
	ns := servingNamespace()
	hosts = append(hosts, manifests.ServeMetricsService+"."+ns+".svc", manifests.ServeMetricsService+"."+ns+".svc.cluster.local")
	if ip := os.Getenv("POD_IP"); ip != "" {
		hosts = append(hosts, ip)
	}
	return hosts
}

// servingNamespace is the namespace serve runs in: its pod's, which the
// Deployment passes in POD_NAMESPACE (downward API) wherever install put it
// (--serve-namespace); outside a pod, install's default.
func servingNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return keys.VolcanoNamespace
}

// servedPaths are the paths of the metrics address: /metrics and, with
// profiling, pprof's index, its handlers and each of runtime/pprof's
// profiles (the index serves /debug/pprof/<profile>). The HTTPS checks
// review these only (securemetrics.NewFilter).
func servedPaths(profiling bool) []string {
	paths := []string{"/metrics"}
	if profiling {
		paths = append(paths, "/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/profile", "/debug/pprof/symbol", "/debug/pprof/trace")
		for _, p := range runtimepprof.Profiles() {
			paths = append(paths, "/debug/pprof/"+p.Name())
		}
	}
	return paths
}

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
