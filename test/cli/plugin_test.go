package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The plugin as kubectl runs it: the installed kubectl finds kubectl-vc
// and its completion helper kubectl_complete-vc on PATH.

var helperOnce struct {
	sync.Once
	dir string
	err error
}

// pluginDir returns a directory holding kubectl-vc (the package's binary)
// and kubectl_complete-vc built as 'make build' builds it, and nothing
// else, for PATH.
func pluginDir(t *testing.T) string {
	t.Helper()
	helperOnce.Do(func() {
		dir := filepath.Join(env.binDir, "plugin-path")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			helperOnce.err = err
			return
		}
		if err := os.Symlink(env.bin, filepath.Join(dir, "kubectl-vc")); err != nil {
			helperOnce.err = err
			return
		}
		build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "kubectl_complete-vc"), "./cmd/kubectl_complete-vc")
		build.Dir = env.rootDir
		if out, err := build.CombinedOutput(); err != nil {
			helperOnce.err = &buildError{err, string(out)}
			return
		}
		helperOnce.dir = dir
	})
	if helperOnce.err != nil {
		t.Fatal(helperOnce.err)
	}
	return helperOnce.dir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "go build kubectl_complete-vc: " + e.err.Error() + "\n" + e.out
}

// kubectlPath is the installed kubectl; without one the test is skipped,
// except under CI=true where the runner must have it.
func kubectlPath(t *testing.T) string {
	t.Helper()
	k, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kubectl is not installed; the plugin tests run the real kubectl")
		}
		t.Skip("kubectl is not installed: the plugin tests run the real kubectl")
	}
	return k
}

// kubectl runs the installed kubectl with pathDir first on PATH and the
// admin kubeconfig in KUBECONFIG: kubectl relays its environment to a
// plugin but not its own flags, so a kubeconfig reaches the plugin's
// completion only through the environment.
func kubectl(t *testing.T, pathDir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(kubectlPath(t), args...)
	cmd.Env = append(cleanEnv(), "PATH="+pathDir+":/usr/bin:/bin", "KUBECONFIG="+env.admin)
	return runCmd(t, cmd)
}

// completions returns the candidates of a 'kubectl __complete' run, without
// the directive line.
func completions(out string) (names []string, directive string) {
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasPrefix(l, ":"):
			directive = l
		case l != "":
			names = append(names, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return names, directive
}

// TestKubectlCompletesPluginArguments: 'kubectl vc queue close <TAB>'
// completes queue names from the cluster through kubectl_complete-vc, and
// without the helper kubectl completes none.
func TestKubectlCompletesPluginArguments(t *testing.T) {
	dir := pluginDir(t)
	deleteQueuesAfter(t, "plugcomp-one", "plugcomp-two")
	mustVC(t, "queue", "create", "plugcomp-one")
	mustVC(t, "queue", "create", "plugcomp-two")

	// What bash runs for 'kubectl vc queue close <TAB>'.
	r := kubectl(t, dir, "__complete", "vc", "queue", "close", "")
	if r.Code != 0 {
		t.Fatalf("kubectl __complete:\n%s", r)
	}
	names, directive := completions(r.Stdout)
	if !contains(names, "plugcomp-one") || !contains(names, "plugcomp-two") {
		t.Errorf("queue names not completed: %v\n%s", names, r)
	}
	// cobra's NoFileComp: no file names mixed in.
	if directive != ":4" {
		t.Errorf("directive %q, want :4 (no file completion)\n%s", directive, r)
	}

	// 'kubectl vc queue close plugcomp-one plugcomp<TAB>': a prefix, and a
	// queue already named is not offered again.
	r = kubectl(t, dir, "__complete", "vc", "queue", "close", "plugcomp-one", "plugcomp")
	if names, _ := completions(r.Stdout); r.Code != 0 || len(names) != 1 || names[0] != "plugcomp-two" {
		t.Errorf("prefix completion: %v\n%s", names, r)
	}

	// Subcommands of the plugin: 'kubectl vc <TAB>'.
	r = kubectl(t, dir, "__complete", "vc", "")
	if names, _ := completions(r.Stdout); !contains(names, "queue") || !contains(names, "podgroup") {
		t.Errorf("subcommands not completed: %v\n%s", names, r)
	}

	// The plugin alone, without its helper: kubectl finds the plugin but
	// has nobody to ask for its arguments.
	bare := t.TempDir()
	if err := os.Symlink(env.bin, filepath.Join(bare, "kubectl-vc")); err != nil {
		t.Fatal(err)
	}
	r = kubectl(t, bare, "__complete", "vc", "queue", "close", "")
	if names, _ := completions(r.Stdout); contains(names, "plugcomp-one") {
		t.Errorf("queue names completed without kubectl_complete-vc: the test does not test the helper\n%s", r)
	}
}

// TestKubectlShowsPluginName: started by kubectl, help, usage and error
// hints say 'kubectl vc'; run by hand, 'kubectl-vc'.
func TestKubectlShowsPluginName(t *testing.T) {
	dir := pluginDir(t)

	r := kubectl(t, dir, "vc", "queue", "close", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "Usage:\n  kubectl vc queue close ") || strings.Contains(r.Stdout, "kubectl-vc queue") {
		t.Errorf("kubectl vc queue close --help:\n%s", r)
	}
	r = kubectl(t, dir, "vc", "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "kubectl vc [command]") || !strings.Contains(r.Stdout, `Use "kubectl vc [command] --help"`) {
		t.Errorf("kubectl vc --help:\n%s", r)
	}
	r = kubectl(t, dir, "vc", "queue", "close", "--bogus")
	if r.Code == 0 || strings.TrimSpace(r.Stderr) != "error: unknown flag: --bogus (see 'kubectl vc queue close --help')" {
		t.Errorf("kubectl vc queue close --bogus:\n%s", r)
	}

	// By hand, found on PATH: the shell passes the name as typed.
	byHand := exec.Command(filepath.Join(dir, "kubectl-vc"), "queue", "close", "--help")
	byHand.Args[0] = "kubectl-vc"
	byHand.Env = append(cleanEnv(), "PATH="+dir+":/usr/bin:/bin")
	r = runCmd(t, byHand)
	if r.Code != 0 || !strings.Contains(r.Stdout, "Usage:\n  kubectl-vc queue close ") {
		t.Errorf("kubectl-vc queue close --help:\n%s", r)
	}
	// By a path PATH would not give.
	byPath := exec.Command(env.bin, "queue", "close", "--bogus")
	byPath.Env = append(cleanEnv(), "PATH="+dir+":/usr/bin:/bin")
	r = runCmd(t, byPath)
	if r.Code == 0 || strings.TrimSpace(r.Stderr) != "error: unknown flag: --bogus (see 'kubectl-vc queue close --help')" {
		t.Errorf("%s queue close --bogus:\n%s", env.bin, r)
	}
	// The completion script is written for the command's name either
	// way: 'kubectl vc completion bash' must not take over kubectl's own.
	r = kubectl(t, dir, "vc", "completion", "bash")
	if r.Code != 0 || !strings.Contains(r.Stdout, "complete -o default -F __start_kubectl-vc kubectl-vc") {
		t.Errorf("kubectl vc completion bash does not complete kubectl-vc:\n%.400s", r.Stdout)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPluginDiscovery runs the binary the way most users will: kubectl
// finds kubectl-vc on PATH and runs it as 'kubectl vc'.
func TestPluginDiscovery(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	deleteQueuesAfter(t, "e2e-plugin")
	mustVC(t, "queue", "create", "e2e-plugin")
	cmd := exec.Command(kubectl, "vc", "queue", "list", "e2e-plugin", "--kubeconfig", env.admin)
	cmd.Env = append(cleanEnv(), "PATH="+env.binDir+":/usr/bin:/bin")
	r := runCmd(t, cmd)
	if r.Code != 0 || !strings.Contains(r.Stdout, "e2e-plugin") {
		t.Fatalf("kubectl vc queue list:\n%s", r)
	}
	cmd = exec.Command(kubectl, "vc", "queue", "close", "--help")
	cmd.Env = append(cleanEnv(), "PATH="+env.binDir+":/usr/bin:/bin")
	r = runCmd(t, cmd)
	if r.Code != 0 || !strings.Contains(r.Stdout, "kubectl vc queue close") {
		t.Fatalf("kubectl vc queue close --help:\n%s", r)
	}
}
