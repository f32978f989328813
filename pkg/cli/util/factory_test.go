package util

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// The CLI's clients have no client-side rate limit unless the caller's
// configuration sets one: every command sends one request at a time.
func TestRestConfigHasNoClientThrottle(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	cfg, err := NewFactory(flags).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS >= 0 || cfg.RateLimiter != nil {
		t.Errorf("QPS %v, rate limiter %v: want no client-side limit (negative QPS)", cfg.QPS, cfg.RateLimiter)
	}
	if cfg.UserAgent != "kubectl-vc" {
		t.Errorf("user agent %q", cfg.UserAgent)
	}

	// A limit the caller asked for is kept.
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config { c.QPS, c.Burst = 7, 9; return c }
	cfg, err = NewFactory(flags).RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != 7 || cfg.Burst != 9 {
		t.Errorf("QPS %v burst %d, want the caller's 7 and 9", cfg.QPS, cfg.Burst)
	}
}
