package cli

// The binary built as 'make build' builds it, with a version: what
// 'version' and 'completion' print, directly and through kubectl's plugin
// discovery.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
)

var (
	versionedOnce sync.Once
	versionedDir  string
	versionedErr  error
)

const testVersion = "v9.8.7-test"

// versionedBinary builds kubectl-vc once per test run, with the same
// version ldflags as 'make build' (the package's binary has none).
func versionedBinary(t *testing.T) string {
	t.Helper()
	versionedOnce.Do(func() {
		versionedDir, versionedErr = os.MkdirTemp("", "kubectl-vc-bin-")
		if versionedErr == nil {
			_, versionedErr = cptest.BuildBinary(versionedDir, "-X github.com/kubectl-vc/kubectl-vc/pkg/version.gitVersion="+testVersion)
		}
	})
	if versionedErr != nil {
		t.Fatal(versionedErr)
	}
	return filepath.Join(versionedDir, "kubectl-vc")
}

func userKubeconfig(t *testing.T, user string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.cp.WriteKubeconfig(p, user); err != nil {
		t.Fatal(err)
	}
	return p
}

func runEnv(t *testing.T, env []string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return o.String(), e.String(), code
}

// TestVersionThroughKubectlPluginDiscovery runs 'kubectl vc version' with
// the installed kubectl, which finds kubectl-vc on PATH.
func TestVersionThroughKubectlPluginDiscovery(t *testing.T) {
	bin := versionedBinary(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not installed: ", err)
	}
	// Only the binary under test and kubectl on PATH: a developer's own
	// kubectl-vc (bin/ on PATH, as docs/development.md suggests) would
	// otherwise shadow it and make 'kubectl plugin list' warn and exit 1.
	path := filepath.Dir(bin) + ":" + filepath.Dir(kubectl) + ":/usr/bin:/bin"
	env := []string{"PATH=" + path, "KUBECONFIG=" + userKubeconfig(t, controlplane.AdminUser)}
	out, errOut, code := runEnv(t, env, kubectl, "vc", "version")
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	if !strings.Contains(out, "Client Version: "+testVersion) || !strings.Contains(out, "Server Version: v1.37") {
		t.Errorf("unexpected output:\n%s", out)
	}

	out, _, code = runEnv(t, env, kubectl, "plugin", "list")
	if code != 0 || !strings.Contains(out, "kubectl-vc") {
		t.Errorf("kubectl plugin list does not show kubectl-vc (exit %d):\n%s", code, out)
	}

	// kubectl itself parses the server version our control plane reports.
	out, errOut, code = runEnv(t, env, kubectl, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("kubectl version: exit %d: %s", code, errOut)
	}
	var v struct {
		ServerVersion struct{ Major, Minor, GitVersion string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if v.ServerVersion.Major != "1" || v.ServerVersion.Minor != "37" {
		t.Errorf("server version as kubectl parsed it: %+v", v.ServerVersion)
	}
}

// TestVersionFailures: an unreachable server and a bad flag each give one
// line on stderr and a non-zero exit; --client needs no server.
func TestVersionFailures(t *testing.T) {
	bin := versionedBinary(t)
	// A kubeconfig whose server is down, as after 'make cluster-down'.
	down := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(down, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	unreachable := []string{"KUBECONFIG=" + down}

	out, _, code := runEnv(t, unreachable, bin, "version", "--client", "-o", "json")
	if code != 0 || !strings.Contains(out, `"gitVersion": "`+testVersion+`"`) {
		t.Errorf("version --client: exit %d, out %s", code, out)
	}

	cases := []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "cannot reach the Kubernetes API server at 127.0.0.1:1"},
		{[]string{"version", "-o", "xml"}, `unknown output format "xml"`},
		{[]string{"version", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh"`},
	}
	for _, tc := range cases {
		_, errOut, code := runEnv(t, unreachable, bin, tc.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code == 0 || len(lines) != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", tc.args, code, errOut, tc.want)
		}
	}

	// A user without RBAC rights still sees the version (discovery is open to
	// authenticated users), so the check is done with a bad token instead.
	_, errOut, code := runEnv(t, []string{"KUBECONFIG=" + userKubeconfig(t, controlplane.AdminUser)}, bin, "version", "--token", "wrong")
	if code == 0 || !strings.Contains(errOut, "unauthorized") {
		t.Errorf("bad token: exit %d, stderr %q", code, errOut)
	}
}

// TestCompletionScripts: every supported shell gets a script.
func TestCompletionScripts(t *testing.T) {
	bin := versionedBinary(t)
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errOut, code := runEnv(t, nil, bin, "completion", sh)
		if code != 0 || !strings.Contains(out, "kubectl-vc") {
			t.Errorf("completion %s: exit %d, stderr %s", sh, code, errOut)
		}
	}
}
