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

// TestServeNodeSetWithoutSlurm: 'serve' with the NodeSet controller where
// no scontrol is (PATH an empty directory, as in the kubectl-vc image)
// exits 1 with one 'error:' line that names what is missing and the way
// out, before it listens or reaches the (unreachable) API server.
func TestServeNodeSetWithoutSlurm(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := unreachableKubeconfig(t, dir)
	t.Setenv("PATH", dir)
	for _, controllers := range []string{"nodeset", "queue,podgroup,nodeset"} {
		var out, errOut bytes.Buffer
		code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			[]string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=" + controllers,
				"--metrics-bind-address=0", "--health-probe-bind-address=0"}, cli.Commands()...)
		msg := errOut.String()
		if code != 1 || strings.Count(msg, "\n") != 1 ||
			!strings.HasPrefix(msg, "error: controller nodeset cannot start: the NodeSet controller needs the Slurm client commands and a munge key (scontrol not found on PATH)") ||
			!strings.Contains(msg, "--controllers") {
			t.Errorf("--controllers=%s: exit %d, stderr %q", controllers, code, msg)
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
