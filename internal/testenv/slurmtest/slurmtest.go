// Package slurmtest runs a real, throw-away Slurm controller for tests:
// munged and slurmctld from Debian's packages (hack/slurm/install.sh), on
// loopback, with a generated slurm.conf whose nodes are the given names.
//
// No slurmd runs. The nodes are declared State=IDLE and SlurmdTimeout=0 so
// slurmctld keeps them schedulable although nothing answers on them; an
// allocation made with "salloc --no-shell" then makes a node truly
// ALLOCATED (and DRAINING once drained) without launching anything on it.
package slurmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// Cluster is a running munged + slurmctld.
type Cluster struct {
	Dir  string
	Conf string

	procs []*proc
}

// proc is a started daemon and a channel closed once it has been reaped.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// Binaries the cluster needs; Start fails with a hint when one is missing.
var binaries = []string{"munged", "slurmctld", "scontrol", "sinfo", "squeue", "salloc", "scancel"}

// Start writes the configuration into a new directory under dir and starts
// the daemons. Call Stop when done.
func Start(ctx context.Context, dir string, nodes []string) (*Cluster, error) {
	for _, b := range binaries {
		if _, err := exec.LookPath(b); err != nil {
			return nil, fmt.Errorf("%s not found: run hack/slurm/install.sh (make slurm): %w", b, err)
		}
	}
	c := &Cluster{Dir: dir, Conf: filepath.Join(dir, "slurm.conf")}
	munge := filepath.Join(dir, "munge")
	for _, d := range []string{munge, filepath.Join(dir, "state"), filepath.Join(dir, "spool")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(munge, "munge.key"), key, 0o600); err != nil {
		return nil, err
	}
	socket := filepath.Join(munge, "munge.socket")
	ports, err := freeport.Ports("127.0.0.1", 2)
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`ClusterName=kvctest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=%s
AuthType=auth/munge
AuthInfo=socket=%s
CredType=cred/munge
StateSaveLocation=%s
SlurmdSpoolDir=%s
SlurmctldPidFile=%s
SlurmctldLogFile=%s
SchedulerType=sched/builtin
SelectType=select/linear
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmdTimeout=0
NodeName=%s NodeAddr=127.0.0.1 CPUs=1 State=IDLE
PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, ports[0], ports[1], currentUser(), socket, filepath.Join(dir, "state"), filepath.Join(dir, "spool"),
		filepath.Join(dir, "slurmctld.pid"), filepath.Join(dir, "slurmctld.log"), strings.Join(nodes, ","))
	if err := os.WriteFile(c.Conf, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	// --force: munged otherwise refuses a socket directory that is not
	// world-executable, which a private test directory is not.
	if err := c.spawn(filepath.Join(dir, "munged.out"), "munged", "-F", "--force",
		"--key-file="+filepath.Join(munge, "munge.key"), "--socket="+socket,
		"--pid-file="+filepath.Join(munge, "munged.pid"), "--seed-file="+filepath.Join(munge, "seed"),
		"--log-file="+filepath.Join(munge, "munged.log")); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, func() bool { _, err := os.Stat(socket); return err == nil }); err != nil {
		c.Stop()
		return nil, fmt.Errorf("munged did not start: %w", err)
	}
	if err := c.spawn(filepath.Join(dir, "slurmctld.out"), "slurmctld", "-D", "-i", "-c"); err != nil {
		c.Stop()
		return nil, err
	}
	client := c.Client()
	if err := waitFor(ctx, func() bool { return client.Refresh(ctx) == nil }); err != nil {
		c.Stop()
		log, _ := os.ReadFile(filepath.Join(dir, "slurmctld.log"))
		return nil, fmt.Errorf("slurmctld did not answer: %w\n%s", err, log)
	}
	return c, nil
}

// StartT starts a cluster in a test's temporary directory and stops it at cleanup.
func StartT(t testing.TB, nodes ...string) *Cluster {
	t.Helper()
	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, t.TempDir(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// skipShort skips a test that needs Slurm's daemons under 'go test
// -short' ('make unit'): those run in 'make test'.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Slurm's daemons: run without -short (make test)")
	}
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

func (c *Cluster) spawn(logPath, name string, args ...string) error {
	out, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group, so Stop reaches anything the daemon forks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	c.procs = append(c.procs, p)
	go func() { _ = cmd.Wait(); out.Close(); close(p.done) }()
	return nil
}

// Stop kills the daemons (slurmctld first) and waits until they are gone.
// It waits for the reaping, not for a fixed time: a daemon killed on a
// loaded machine may take seconds to exit, and a caller that stopped Slurm
// must not find it still answering. The minute is only a bound on a
// process the kernel cannot end (stuck in I/O).
func (c *Cluster) Stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(time.Minute):
		}
	}
	c.procs = nil
}

// Client returns a slurm.Client for this cluster.
func (c *Cluster) Client() *slurm.Commands {
	return slurm.NewCommands(slurm.CommandsConfig{Conf: c.Conf})
}

var grantedRE = regexp.MustCompile(`Granted job allocation (\d+)`)

// Allocate makes the node busy with a job allocation that launches nothing
// and returns the job id. It fails if the node cannot be allocated now.
func (c *Cluster) Allocate(ctx context.Context, node string, minutes int) (string, error) {
	out, err := c.command(ctx, "salloc", "--no-shell", "--immediate=10", "-N1", "-w", node,
		fmt.Sprintf("--time=%d", minutes))
	if err != nil {
		return "", err
	}
	m := grantedRE.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("salloc: no allocation in %q", out)
	}
	return m[1], nil
}

// EndJob ends a job that Allocate started on node, as if it had finished.
//
// With no slurmd, a cancelled job stays COMPLETING forever (nobody confirms
// the kill), so the node would stay DRAINING. Setting the node DOWN is how
// an admin clears that in real clusters too: slurmctld drops the job. The
// node then keeps its DRAIN flag (DOWN+DRAIN reads "drained") if it had
// one; otherwise it is resumed to IDLE.
func (c *Cluster) EndJob(ctx context.Context, jobID, node string) error {
	if _, err := c.command(ctx, "scancel", jobID); err != nil {
		return err
	}
	st, err := c.Client().State(ctx, node)
	if err != nil {
		return err
	}
	reason := st.Reason
	if reason == "" {
		reason = "job ended"
	}
	if _, err := c.command(ctx, "scontrol", "update", "nodename="+node, "state=down", "reason="+reason); err != nil {
		return err
	}
	if !st.Drain() {
		_, err = c.command(ctx, "scontrol", "update", "nodename="+node, "state=resume")
	}
	return err
}

// Scontrol runs scontrol against the cluster, for tests that act as an admin.
func (c *Cluster) Scontrol(ctx context.Context, args ...string) (string, error) {
	return c.command(ctx, "scontrol", args...)
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return buf.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, buf.String())
	}
	return buf.String(), nil
}

func waitFor(ctx context.Context, ok func() bool) error {
	for {
		if ok() {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("timed out")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
