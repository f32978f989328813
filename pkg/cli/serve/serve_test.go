package serve_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

// TestServeNodeSetWithoutSlurm: 'serve' with the NodeSet controller told to
// use Slurm's commands (--slurm-conf) where no scontrol is (PATH an empty
// directory, as in the kubectl-vc image) exits 1 with one 'error:' line
// that names what is missing and the way out, before it listens or
// reaches the (unreachable) API server. Bad --slurm-* flags are one line
// too.
func TestServeNodeSetWithoutSlurm(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := unreachableKubeconfig(t, dir)
	t.Setenv("PATH", dir)
	for _, controllers := range []string{"nodeset", "queue,podgroup,nodeset"} {
		var out, errOut bytes.Buffer
		code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			[]string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=" + controllers, "--slurm-conf=/etc/slurm/slurm.conf",
				"--metrics-bind-address=0", "--health-probe-bind-address=0"}, cli.Commands()...)
		msg := errOut.String()
		if code != 1 || strings.Count(msg, "\n") != 1 ||
			!strings.HasPrefix(msg, "error: controller nodeset cannot start: the NodeSet controller needs the Slurm client commands and a munge key (scontrol not found on PATH)") ||
			!strings.Contains(msg, "--controllers") {
			t.Errorf("--controllers=%s: exit %d, stderr %q", controllers, code, msg)
		}
	}

	key := filepath.Join(dir, "jwt.key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--slurm-rest-url=http://slurm:6820"}, "error: --slurm-rest-url needs exactly one of --slurm-jwt-key-file and --slurm-token-file"},
		{[]string{"--slurm-rest-url=http://slurm:6820", "--slurm-jwt-key-file=" + key, "--slurm-token-file=" + key}, "error: --slurm-rest-url needs exactly one of"},
		{[]string{"--slurm-jwt-key-file=" + key}, "error: --slurm-jwt-key-file and --slurm-token-file need --slurm-rest-url"},
		{[]string{"--slurm-rest-url=slurm:6820", "--slurm-jwt-key-file=" + key}, `error: slurmrestd URL "slurm:6820": want http://HOST:PORT`},
		{[]string{"--slurm-rest-url=http://slurm:6820", "--slurm-jwt-key-file=" + key, "--slurm-rest-api-version=v0.0.39"}, `error: slurmrestd API version "v0.0.39": want one of v0.0.45`},
		{[]string{"--slurm-rest-url=http://slurm:6820", "--slurm-jwt-key-file=" + key, "--slurm-conf=/etc/slurm/slurm.conf"}, "error: --slurm-rest-url and --slurm-conf/--slurm-bin-dir choose two ways"},
		{[]string{"--slurm-rest-url=http://slurm:6820", "--slurm-jwt-key-file=" + filepath.Join(dir, "none")}, "error: controller nodeset cannot start: the NodeSet controller cannot reach Slurm: --slurm-jwt-key-file: reading the Slurm JWT key"},
	} {
		var out, errOut bytes.Buffer
		code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			append([]string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=nodeset",
				"--metrics-bind-address=0", "--health-probe-bind-address=0"}, tc.args...), cli.Commands()...)
		if msg := errOut.String(); code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", tc.args, code, msg, tc.want)
		}
	}
}

// TestProfilingNeedsMetricsAddress: --profiling with the metrics endpoint
// disabled is one usage line and exit 1, before anything starts.
func TestProfilingNeedsMetricsAddress(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t, t.TempDir())
	var out, errOut bytes.Buffer
	code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		[]string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=queue", "--profiling",
			"--metrics-bind-address=0", "--health-probe-bind-address=0"}, cli.Commands()...)
	msg := errOut.String()
	if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "--profiling") || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), msg)
	}
}

// unreachableKubeconfig writes, in dir, a kubeconfig whose server no one
// listens on: what these tests check happens before any request.
func unreachableKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}
