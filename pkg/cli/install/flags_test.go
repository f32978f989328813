package install_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

// TestBadImageFlag: a bad --image is refused as the other install flags
// are, before anything is printed or applied: one 'error:' line on stderr,
// nothing on stdout, exit 1. The kubeconfig points nowhere, so reaching
// the cluster would fail differently.
func TestBadImageFlag(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", dir+"/none")
	notPEM := dir + "/ca.txt"
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const url = "--webhook-url=https://10.0.0.5:9443/validate-queues"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--serve", "--image", ""}, "invalid --image: is empty"},
		{[]string{"--serve", "--image="}, "invalid --image: is empty"},
		{[]string{"--serve", "--image", "ghcr.io/kubectl-vc/kubectl-vc"}, "has no tag or digest"},
		{[]string{"--serve", "--image", "ghcr.io/Kubectl-VC/kubectl-vc:v1"}, "is not an image reference"},
		{[]string{"--serve", "--print", "--image", "bad image:v1"}, "is not an image reference"},
		{[]string{"--image", "ghcr.io/kubectl-vc/kubectl-vc:v1"}, "use it with --serve"},
		{[]string{"--rbac", "--image", "ghcr.io/kubectl-vc/kubectl-vc:v1"}, "use it with --serve"},
		{[]string{"--slurm-namespaces=slurm"}, "use it with --serve or --rbac"},
		{[]string{"--serve-namespace=kvc"}, "use it with --serve or --rbac"},
		{[]string{"--serve", "--print", "--serve-namespace=KVC"}, `invalid --serve-namespace "KVC"`},
		{[]string{"--crds", "--slurm-namespaces=slurm"}, "use it with --serve or --rbac"},
		{[]string{"--serve", "--print", "--slurm-namespaces=Slurm"}, `invalid --slurm-namespaces "Slurm"`},
		{[]string{"--rbac", "--print", "--slurm-namespaces=slurm,"}, `invalid --slurm-namespaces ""`},
		// The queue webhook of the index mode, for a serve outside the cluster.
		{[]string{"--webhook-url=http://10.0.0.5:9443/validate-queues"}, "over https only"},
		{[]string{"--webhook-url=10.0.0.5:9443"}, `invalid --webhook-url "10.0.0.5:9443"`},
		{[]string{"--webhook-url=https://10.0.0.5:9443/validate-queues?x=1"}, "no user, query or fragment"},
		{[]string{url, "--admission=per-queue"}, "the per-queue mode has no webhook"},
		{[]string{url, "--crds"}, "use it with --policies"},
		{[]string{url, "--serve", "--print"}, "with --serve the webhook goes through serve's Service"},
		{[]string{url, "--webhook-ca-file=" + dir + "/missing.pem"}, "--webhook-ca-file: open " + dir + "/missing.pem"},
		{[]string{url, "--webhook-ca-file=" + notPEM}, "holds no PEM certificate"},
		{[]string{"--webhook-ca-file=" + notPEM}, "use it with --webhook-url"},
	} {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		code := cli.Execute(streams, append([]string{"install"}, tc.args...), cli.Commands()...)
		if code == 0 {
			t.Errorf("%q: exit 0", tc.args)
		}
		if out.Len() != 0 {
			t.Errorf("%q: wrote to stdout: %q", tc.args, out.String())
		}
		msg := errOut.String()
		if !strings.HasPrefix(msg, "error: ") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) {
			t.Errorf("%q: want one 'error:' line containing %q, got %q", tc.args, tc.want, msg)
		}
	}
}
