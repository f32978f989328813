package serve_test

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

// TestProfilingNeedsSecureMetrics (issue 42, Deliver 5): pprof is never
// served without authentication: --profiling with plain HTTP metrics, on
// their own address or on the health probes', is one error line and exit
// 1, before serve listens or asks the API server anything.
func TestProfilingNeedsSecureMetrics(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t, t.TempDir())
	for _, addrs := range [][]string{
		{"--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=0"},
		{"--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0"},
	} {
		var out, errOut bytes.Buffer
		code := cli.Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			append([]string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=queue", "--profiling", "--metrics-secure=false"}, addrs...),
			cli.Commands()...)
		msg := errOut.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "error: --profiling serves Go's profiles only over HTTPS") || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", addrs, code, out.String(), msg)
		}
	}
}
