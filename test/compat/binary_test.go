package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/controlplane"
	"github.com/kubectl-vc/kubectl-vc/test/internal/cptest"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

const testVersion = "v9.8.7-test"

// binary builds kubectl-vc once per test run, with the same version ldflags
// as 'make build'.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "kubectl-vc-bin-")
		if buildErr == nil {
			_, buildErr = cptest.BuildBinary(binDir, "-X github.com/kubectl-vc/kubectl-vc/pkg/version.gitVersion="+testVersion)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "kubectl-vc")
}

func kubeconfig(t *testing.T, user string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(p, user); err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t *testing.T, env []string, name string, args ...string) (stdout, stderr string, code int) {
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
	bin := binary(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal("kubectl is not installed: ", err)
	}
	env := []string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"), "KUBECONFIG=" + kubeconfig(t, controlplane.AdminUser)}
	out, errOut, code := run(t, env, kubectl, "vc", "version")
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	if !strings.Contains(out, "Client Version: "+testVersion) || !strings.Contains(out, "Server Version: v1.37") {
		t.Errorf("unexpected output:\n%s", out)
	}

	out, _, code = run(t, env, kubectl, "plugin", "list")
	if code != 0 || !strings.Contains(out, "kubectl-vc") {
		t.Errorf("kubectl plugin list does not show kubectl-vc (exit %d):\n%s", code, out)
	}

	// kubectl itself parses the server version our control plane reports.
	out, errOut, code = run(t, env, kubectl, "version", "-o", "json")
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
	bin := binary(t)
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

	out, _, code := run(t, unreachable, bin, "version", "--client", "-o", "json")
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
		_, errOut, code := run(t, unreachable, bin, tc.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code == 0 || len(lines) != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want one line containing %q", tc.args, code, errOut, tc.want)
		}
	}

	// A user without RBAC rights still sees the version (discovery is open to
	// authenticated users), so the check is done with a bad token instead.
	_, errOut, code := run(t, []string{"KUBECONFIG=" + kubeconfig(t, controlplane.AdminUser)}, bin, "version", "--token", "wrong")
	if code == 0 || !strings.Contains(errOut, "unauthorized") {
		t.Errorf("bad token: exit %d, stderr %q", code, errOut)
	}
}

// TestCompletionScripts: every supported shell gets a script.
func TestCompletionScripts(t *testing.T) {
	bin := binary(t)
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errOut, code := run(t, nil, bin, "completion", sh)
		if code != 0 || !strings.Contains(out, "kubectl-vc") {
			t.Errorf("completion %s: exit %d, stderr %s", sh, code, errOut)
		}
	}
}

// TestControlPlaneDiesWithItsParent starts a control plane in a child
// process (this test binary, re-executed) and SIGKILLs that child: etcd and
// kube-apiserver must not outlive it, so a crashed or timed-out test leaves
// nothing behind.
func TestControlPlaneDiesWithItsParent(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestControlPlaneDiesWithItsParent$")
	// The child dies by SIGKILL and cannot clean up: its control plane
	// works in a directory this test removes.
	cmd.Env = append(os.Environ(), "KUBECTL_VC_ORPHAN_CHILD=1", "KUBECTL_VC_ORPHAN_DIR="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids struct{ Etcd, APIServer int }
	dec := json.NewDecoder(stdout)
	if err := dec.Decode(&pids); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("child did not report its pids: %v", err)
	}
	if pids.Etcd == 0 || pids.APIServer == 0 || !running(pids.Etcd) || !running(pids.APIServer) {
		t.Fatalf("child's control plane not running: %+v", pids)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for running(pids.Etcd) || running(pids.APIServer) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pids.Etcd, syscall.SIGKILL)
			_ = syscall.Kill(pids.APIServer, syscall.SIGKILL)
			t.Fatalf("etcd or kube-apiserver outlived the killed test process: %+v", pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// orphanChild is the child process of TestControlPlaneDiesWithItsParent,
// run from TestMain: it starts a control plane in the directory the parent
// gave, reports the pids and waits to be killed. It never returns.
func orphanChild() {
	c, err := controlplane.Start(context.Background(), controlplane.Options{Dir: os.Getenv("KUBECTL_VC_ORPHAN_DIR")})
	if err != nil {
		os.Exit(3)
	}
	e, a := c.Pids()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]int{"Etcd": e, "APIServer": a})
	time.Sleep(time.Hour) // killed by the parent test
	os.Exit(4)
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
