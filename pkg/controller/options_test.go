package controller_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// parsed returns the options after parsing args as serve's command line.
func parsed(t *testing.T, args ...string) *controller.Options {
	t.Helper()
	o := controller.NewOptions()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestCompleteSelectsControllers: no --controllers runs every registered
// controller (the default is made here only: Run refuses an empty list),
// and the client configuration carries the rate limits and serve's name.
func TestCompleteSelectsControllers(t *testing.T) {
	base := &rest.Config{Host: "https://example:6443", UserAgent: "other"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, framework.Names()},
		{[]string{"--controllers=queue"}, []string{"queue"}},
		{[]string{"--controllers=nodeset,queue"}, []string{"nodeset", "queue"}},
	} {
		o := parsed(t, append(tc.args, "--kube-api-qps=20", "--kube-api-burst=30")...)
		if err := o.Validate(); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		c := o.Complete(base)
		var got []string
		for _, ctrl := range c.Controllers {
			got = append(got, ctrl.Name())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: controllers %q, want %q", tc.args, got, tc.want)
		}
		if k := c.Kubeconfig; k.Host != base.Host || k.QPS != 20 || k.Burst != 30 || k.UserAgent != keys.ServeName {
			t.Errorf("%q: kubeconfig host %q qps %v burst %d agent %q", tc.args, k.Host, k.QPS, k.Burst, k.UserAgent)
		}
	}
	if base.UserAgent != "other" {
		t.Error("Complete changed the configuration it was given")
	}
	err := controller.Run(context.Background(), controller.Config{Kubeconfig: base, MetricsAddr: "0", HealthAddr: "0"})
	if err == nil || !strings.Contains(err.Error(), "no controllers") {
		t.Errorf("Run without controllers: %v", err)
	}
}

// TestEndpointRules: the rules of the metrics and health addresses hold
// for the flags (Validate) and for a Config written directly (Run refuses
// it before it listens or asks the API server anything).
func TestEndpointRules(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profiling", "--metrics-bind-address=0"}, "--profiling serves on the metrics address"},
		{[]string{"--profiling", "--metrics-secure=false"}, controller.ErrProfilingNeedsSecureMetrics},
		{[]string{"--metrics-bind-address=:9000", "--health-probe-bind-address=:9000"}, "are both :9000"},
		{[]string{"--webhook-bind-address=:9443"}, "--webhook-bind-address needs --webhook-cert-dir"},
		{[]string{"--webhook-cert-dir=/tmp"}, "--webhook-cert-dir is the webhook's certificate: give --webhook-bind-address too"},
		{[]string{"--webhook-bind-address=:8081", "--webhook-cert-dir=/tmp"}, "--webhook-bind-address :8081 is already the address of the probes"},
	} {
		o := parsed(t, tc.args...)
		if err := o.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate %q: %v, want %q", tc.args, err, tc.want)
		}
		queue, err := framework.Configure("queue")
		if err != nil {
			t.Fatal(err)
		}
		c := o.Complete(&rest.Config{Host: "http://127.0.0.1:1"})
		c.Controllers = []framework.Controller{queue}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // Run must refuse without waiting on anything
		if err := controller.Run(ctx, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Run %q: %v, want %q", tc.args, err, tc.want)
		}
	}
	if err := parsed(t, "--metrics-bind-address=:9000", "--health-probe-bind-address=:9000", "--metrics-secure=false").Validate(); err != nil {
		t.Errorf("plain HTTP metrics on the probes' address: %v", err)
	}
}

// TestLeaderElectionFlags: the leader-election flags set component-base's
// LeaderElectionConfiguration, under its names, with serve's defaults; the
// Config's one Validate refuses inconsistent timings for the flags and for
// a Config written directly.
func TestLeaderElectionFlags(t *testing.T) {
	le := parsed(t).Config.LeaderElection
	if le.LeaderElect || le.ResourceNamespace != keys.VolcanoNamespace || le.ResourceName != keys.ServeName ||
		le.LeaseDuration.Duration != 15*time.Second || le.RenewDeadline.Duration != 10*time.Second || le.RetryPeriod.Duration != 2*time.Second {
		t.Errorf("defaults: %+v", le)
	}
	o := parsed(t, "--leader-elect", "--leader-elect-resource-namespace=ns", "--leader-elect-resource-name=l",
		"--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=5s", "--leader-elect-identity=me")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	c := o.Complete(&rest.Config{Host: "http://127.0.0.1:1"})
	le = c.LeaderElection
	if !le.LeaderElect || le.ResourceNamespace != "ns" || le.ResourceName != "l" || c.Identity != "me" ||
		le.LeaseDuration.Duration != 30*time.Second || le.RenewDeadline.Duration != 20*time.Second || le.RetryPeriod.Duration != 5*time.Second {
		t.Errorf("parsed: %+v identity %q", le, c.Identity)
	}
	const want = "leader election needs lease-duration > renew-deadline > retry-period > 0"
	if err := parsed(t, "--leader-elect", "--leader-elect-renew-deadline=20s").Validate(); err == nil || err.Error() != want {
		t.Errorf("renew deadline past the lease: %v", err)
	}
	c.LeaderElection.RetryPeriod.Duration = 0
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("a Config without retry period: %v", err)
	}
}
