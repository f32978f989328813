// Package nodesets is what the NodeSet suites share (test/nodeset, and
// test/bench's BenchmarkScaleOutIn): the Slurm of a test, chosen by
// $KVC_TEST_SLURM, and a test's world of a namespace, that Slurm and a
// running NodeSet controller.
package nodesets

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// The NodeSet suites run against one Slurm at a time, chosen by
// $KVC_TEST_SLURM: "commands" (the default: Debian 12's slurmctld, reached
// with scontrol, sinfo and squeue) or the name of a slurmtest.RESTSuite
// ("slurm-24.11", "slurm-26.05": slurmctld, slurmd and slurmrestd of that
// Slurm in a chroot, reached over REST with a JWT). 'make test' runs the
// package once for each.
const SlurmEnv = "KVC_TEST_SLURM"

// Backend is the Slurm cluster of one test: the same behaviour is proven
// whichever way the controller reaches Slurm.
type Backend interface {
	// Name is how the backend appears in logs: "commands", "slurm-24.11".
	Name() string
	// Client is a new client for the controller.
	Client() slurm.Client
	// State reads a node's state from Slurm, apart from the controller.
	State(ctx context.Context, node string) (slurm.NodeState, error)
	// Allocate makes node busy with a job of the given time limit.
	Allocate(ctx context.Context, node string, minutes int) (string, error)
	// EndJob ends the job as if it had finished; the node keeps a drain
	// it had.
	EndJob(ctx context.Context, jobID, node string) error
	// Scontrol acts as an administrator.
	Scontrol(ctx context.Context, args ...string) (string, error)
	// Flaky returns a client whose reads of the node states fail while
	// down is true: Slurm unreachable.
	Flaky(t testing.TB) (client slurm.Client, down *atomic.Bool)
	// ServeFlags are serve's flags that reach this Slurm.
	ServeFlags(t testing.TB) []string
}

// RESTSuite is the REST suite $KVC_TEST_SLURM names, or nil for commands.
func RESTSuite(t testing.TB) *slurmtest.RESTSuite {
	name := os.Getenv(SlurmEnv)
	if name == "" || name == "commands" {
		return nil
	}
	for _, s := range slurmtest.RESTSuites {
		if s.Name == name {
			return &s
		}
	}
	t.Fatalf("%s=%s: want commands or one of the REST suites", SlurmEnv, name)
	return nil
}

// StartSlurm starts the test's Slurm with the given node names.
func StartSlurm(t testing.TB, nodes []string) Backend {
	t.Helper()
	if s := RESTSuite(t); s != nil {
		return &RESTBackend{Cluster: slurmtest.StartRESTT(t, *s, nodes...)}
	}
	return &commandsBackend{c: slurmtest.StartT(t, nodes...)}
}

// commandsBackend is Debian 12's slurmctld without slurmd (slurmtest).
type commandsBackend struct{ c *slurmtest.Cluster }

func (b *commandsBackend) Name() string         { return "commands" }
func (b *commandsBackend) Client() slurm.Client { return b.c.Client() }
func (b *commandsBackend) State(ctx context.Context, node string) (slurm.NodeState, error) {
	return b.c.Client().State(ctx, node)
}
func (b *commandsBackend) Allocate(ctx context.Context, node string, minutes int) (string, error) {
	return b.c.Allocate(ctx, node, minutes)
}
func (b *commandsBackend) EndJob(ctx context.Context, jobID, node string) error {
	return b.c.EndJob(ctx, jobID, node)
}
func (b *commandsBackend) Scontrol(ctx context.Context, args ...string) (string, error) {
	return b.c.Scontrol(ctx, args...)
}
func (b *commandsBackend) ServeFlags(testing.TB) []string {
	return []string{"--slurm-conf=" + b.c.Conf}
}

// Flaky: the real commands but for sinfo, which fails while down as it
// does when slurmctld does not answer in time.
func (b *commandsBackend) Flaky(t testing.TB) (slurm.Client, *atomic.Bool) {
	t.Helper()
	dir := t.TempDir()
	down := &atomic.Bool{}
	flag := filepath.Join(dir, "down")
	for _, name := range []string{"scontrol", "squeue"} {
		bin := LookPath(t, name)
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	script := fmt.Sprintf("#!/bin/sh\nif [ -e %q ]; then echo 'slurm_load_node: Socket timed out on send/recv operation' >&2; exit 1; fi\nexec %q \"$@\"\n",
		flag, LookPath(t, "sinfo"))
	if err := os.WriteFile(filepath.Join(dir, "sinfo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &flagFile{Client: slurm.NewCommands(slurm.CommandsConfig{Conf: b.c.Conf, BinDir: dir}), path: flag, down: down}, down
}

// flagFile turns the down switch into the file the sinfo wrapper checks.
type flagFile struct {
	slurm.Client
	path string
	down *atomic.Bool
}

func (f *flagFile) Refresh(ctx context.Context) error {
	if f.down.Load() {
		_ = os.WriteFile(f.path, nil, 0o644)
	} else {
		_ = os.Remove(f.path)
	}
	return f.Client.Refresh(ctx)
}

// RESTBackend is slurmctld, one slurmd per node and slurmrestd of one
// Slurm version in a chroot, reached over REST with a signed JWT.
type RESTBackend struct{ Cluster *slurmtest.RESTCluster }

func (b *RESTBackend) Name() string { return b.Cluster.Suite.Name }

func (b *RESTBackend) Client() slurm.Client { return b.clientAt(b.Cluster.URL) }

func (b *RESTBackend) clientAt(u string) *slurm.REST {
	tok, err := slurm.NewSignedToken(b.Cluster.JWTKey, "")
	if err != nil {
		panic(err)
	}
	cl, err := slurm.NewREST(slurm.RESTConfig{URL: u, Token: tok})
	if err != nil {
		panic(err)
	}
	return cl
}

func (b *RESTBackend) State(ctx context.Context, node string) (slurm.NodeState, error) {
	return b.clientAt(b.Cluster.URL).State(ctx, node)
}

func (b *RESTBackend) Allocate(ctx context.Context, node string, minutes int) (string, error) {
	d := time.Duration(minutes) * time.Minute
	return b.Cluster.Submit(ctx, node, d, d)
}

// EndJob cancels the job: a real slurmd ends it, and the node is IDLE
// again (DRAINED if it was draining).
func (b *RESTBackend) EndJob(ctx context.Context, jobID, _ string) error {
	return b.Cluster.Cancel(ctx, jobID)
}

func (b *RESTBackend) Scontrol(ctx context.Context, args ...string) (string, error) {
	return b.Cluster.Command(ctx, "scontrol", args...)
}

func (b *RESTBackend) ServeFlags(t testing.TB) []string {
	key := filepath.Join(t.TempDir(), "jwt_hs256.key")
	if err := os.WriteFile(key, b.Cluster.JWTKey, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--slurm-rest-url=" + b.Cluster.URL, "--slurm-jwt-key-file=" + key}
}

// Flaky: slurmrestd behind a proxy that drops every connection while down,
// as a network between serve and slurmrestd that fails.
func (b *RESTBackend) Flaky(t testing.TB) (slurm.Client, *atomic.Bool) {
	t.Helper()
	target, err := url.Parse(b.Cluster.URL)
	if err != nil {
		t.Fatal(err)
	}
	down := &atomic.Bool{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return b.clientAt("http://" + l.Addr().String()), down
}

// LookPath finds a command on PATH or fails the test.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
