// Package doctor proves 'kubectl vc doctor' against the real local API
// server: the built binary run as a user runs it, as the admin and as an
// unprivileged user, on a cluster where the tests write the Leases,
// Deployments, queues and Commands whose state doctor reports; and that
// doctor and the documentation agree: the quick start, run line by line,
// leaves doctor nothing to warn about who acts on Commands, and every
// command doctor prints as a fix runs as printed (real serve processes).
package doctor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/binary"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// env is what every test of the package shares: one control plane, the
// binary with its kubeconfigs, and clients.
var env struct {
	cli                *binary.CLI
	admin, alice, dead string
	vc                 versioned.Interface
	kube               kubernetes.Interface

	// For the quick start's shell lines: the control plane, the binary,
	// a PATH holding it as kubectl's plugin, and a HOME of their own.
	cp               *controlplane.ControlPlane
	dir, bin         string
	pathDir, homeDir string
}

// TestMain builds the binary once and starts one control plane for every
// test of the package. It runs kube-controller-manager (Level
// Controllers) for its namespace controller: the quick start creates
// volcano-system by a line of the documentation, which a second run of the
// test in this process (go test -count=N) would find taken unless the
// namespace can really be deleted, with what serve left in it.
func TestMain(m *testing.M) {
	cptest.Main(m, cptest.Options{Level: controlplane.Controllers, Binary: true, Setup: func(e *cptest.Env) error {
		c, err := binary.NewCLI(e)
		if err != nil {
			return err
		}
		env.cli, env.admin, env.alice, env.dead = c, c.Admin, c.Alice, c.Dead
		env.vc = versioned.NewForConfigOrDie(e.CP.AdminConfig())
		env.kube = kubernetes.NewForConfigOrDie(e.CP.AdminConfig())
		env.cp, env.dir, env.bin = e.CP, e.Dir, e.Binary
		// A PATH as the quick start sets it: kubectl-vc beside kubectl, so
		// that 'kubectl vc ...' runs the built binary as a plugin.
		env.pathDir = filepath.Join(e.Dir, "path")
		env.homeDir = filepath.Join(e.Dir, "home")
		for _, d := range []string{env.pathDir, env.homeDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		return os.Symlink(e.Binary, filepath.Join(env.pathDir, "kubectl-vc"))
	}})
}

// result is what one run of the binary produced.
type result = binary.Result

// command prepares the binary with the given kubeconfig, in an
// environment that reads nothing outside the test.
func command(kubeconfig string, args ...string) *exec.Cmd {
	return env.cli.Command(kubeconfig, args...)
}

func runCmd(t *testing.T, cmd *exec.Cmd) result {
	t.Helper()
	return binary.Run(t, cmd)
}

// vc runs the binary as the admin.
func vc(t *testing.T, args ...string) result {
	t.Helper()
	return env.cli.VC(t, args...)
}

// mustVC runs the binary as the admin and fails the test unless it succeeds.
func mustVC(t *testing.T, args ...string) result {
	t.Helper()
	return env.cli.MustVC(t, args...)
}

func kube(t *testing.T) kubernetes.Interface {
	t.Helper()
	return env.kube
}

// setStatus plays the queue controller: it applies the queue's status with
// the controller's field manager.
func setStatus(t *testing.T, name string, state schedulingv1beta1.QueueState, running int32) {
	t.Helper()
	queues.ApplyStatus(t, env.vc, name, state, running)
}

// commandsFor returns the Commands whose target is the named queue.
func commandsFor(t *testing.T, queue string) []busv1alpha1.Command {
	t.Helper()
	return queues.CommandsFor(t, env.vc, queue)
}

// shell prepares one command line as a user types it: bash, with the
// plugin on PATH and KUBECONFIG set, nothing else of this machine's.
func shell(line string) *exec.Cmd {
	cmd := exec.Command("bash", "-c", line)
	cmd.Env = append(binary.Env(env.homeDir), "KUBECONFIG="+env.admin)
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, "PATH=") {
			cmd.Env[i] = "PATH=" + env.pathDir + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// runLine runs a command line to its end and fails the test unless it
// succeeds.
func runLine(t *testing.T, line string) string {
	t.Helper()
	out, err := shell(line).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// startLine starts a long-running command line (a serve) and stops it, with
// everything it started, when the test ends.
func startLine(t *testing.T, line string) {
	t.Helper()
	cmd := shell(line)
	log := filepath.Join(t.TempDir(), "log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log)
			t.Logf("%s:\n%s", line, b)
		}
	})
}

// deleteNamespaceAfter deletes the namespace when the test ends and waits
// until kube-controller-manager's namespace controller has removed it with
// everything in it, so that the next run of the test can create it again.
// The bound is for a broken run: the controller deletes a namespace's
// contents kind by kind, a few seconds here, more on a loaded machine.
func deleteNamespaceAfter(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		if err := env.kube.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
			return
		} else if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := env.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("cleanup: namespace %s not removed: %v", name, err)
		}
	})
}

// finding is one line of 'doctor -o json'.
type finding struct {
	Check, Status, Message, Fix string
	Objects                     []string
}

// doctorAsUser runs 'kubectl vc doctor -o json' with args as the quick
// start's user types it and returns its findings.
func doctorAsUser(t *testing.T, args ...string) []finding {
	t.Helper()
	out, _ := shell("kubectl vc doctor -o json " + strings.Join(args, " ")).Output()
	var rep struct{ Checks []finding }
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor -o json: %v\n%s", err, out)
	}
	return rep.Checks
}

// until runs doctor until cond holds for its findings (bounded) and
// returns the last ones.
func until(t *testing.T, what string, cond func([]finding) bool, args ...string) []finding {
	t.Helper()
	var last []finding
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		last = doctorAsUser(t, args...)
		return cond(last), nil
	})
	if err != nil {
		t.Fatalf("doctor never reported %s; last:\n%+v", what, last)
	}
	return last
}

func of(fs []finding, check string) []finding {
	var out []finding
	for _, f := range fs {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// hints are the commands a fix prints, in single quotes, as doctor writes
// every command it suggests.
var hintRE = regexp.MustCompile(`'(kubectl [^']*)'`)

func hints(fix string) []string {
	var out []string
	for _, m := range hintRE.FindAllStringSubmatch(fix, -1) {
		out = append(out, m[1])
	}
	return out
}
