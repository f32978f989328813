package slurm_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// TestCommandsAgainstSlurmctld drives a real slurmctld: a drained idle node
// is DRAINED at once, a drained busy node stays DRAINING until its job ends,
// undrain resumes, and the job end time is reported as the deadline.
func TestCommandsAgainstSlurmctld(t *testing.T) {
	cl := slurmtest.StartT(t, "ns-0", "ns-1")
	c := cl.Client()
	ctx := context.Background()

	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(c.Nodes()); got != 2 {
		t.Fatalf("want 2 nodes, got %d: %v", got, c.Nodes())
	}
	if s, ok := c.Node("ns-0"); !ok || !s.Idle() || s.Drain() {
		t.Fatalf("ns-0 should be idle and not drained: %+v", s)
	}

	// Idle node: drained as soon as it is marked.
	if err := c.Drain(ctx, "ns-0", "kubernetes node cordoned"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.IsDrained(ctx, "ns-0"); err != nil || !ok {
		t.Fatalf("idle node should be drained: %v %v", ok, err)
	}
	if s, _ := c.Node("ns-0"); s.Reason != "kubernetes node cordoned" || s.String() != "DRAINED (kubernetes node cordoned)" {
		t.Fatalf("reason not reported: %+v %s", s, s)
	}
	if err := c.Undrain(ctx, "ns-0"); err != nil {
		t.Fatal(err)
	}
	// Undrain twice is harmless (scontrol itself would refuse).
	if err := c.Undrain(ctx, "ns-0"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.IsDrained(ctx, "ns-0"); ok {
		t.Fatal("ns-0 still drained after undrain")
	}

	// An administrator drains the node behind the client's cache (which
	// still shows it idle): a drain by the client keeps their reason.
	if _, err := cl.Scontrol(ctx, "update", "nodename=ns-0", "state=drain", "reason=bad dimm"); err != nil {
		t.Fatal(err)
	}
	if err := c.Drain(ctx, "ns-0", "kubectl-vc: pod cordoned"); err != nil {
		t.Fatal(err)
	}
	if s, err := c.State(ctx, "ns-0"); err != nil || s.Reason != "bad dimm" {
		t.Fatalf("the administrator's drain was overwritten: %+v, %v", s, err)
	}
	if err := c.Undrain(ctx, "ns-0"); err != nil {
		t.Fatal(err)
	}

	// Busy node: draining, not drained, until the job ends.
	job, err := cl.Allocate(ctx, "ns-1", 30)
	if err != nil {
		t.Fatal(err)
	}
	deadline, err := c.JobEndDeadline(ctx, "ns-1")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(deadline); d < 20*time.Minute || d > 31*time.Minute {
		t.Fatalf("deadline %v not about 30 minutes ahead", deadline)
	}
	if d, err := c.JobEndDeadline(ctx, "ns-0"); err != nil || !d.IsZero() {
		t.Fatalf("idle node should have no deadline: %v %v", d, err)
	}
	if err := c.Drain(ctx, "ns-1", "scale-in"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.IsDrained(ctx, "ns-1"); err != nil || ok {
		t.Fatalf("busy node must not count as drained: %v %v", ok, err)
	}
	if s, _ := c.Node("ns-1"); !s.Busy() || !s.Drain() || s.String() != "DRAINING (scale-in)" {
		t.Fatalf("want DRAINING: %+v", s)
	}
	if ok, _ := c.IsDrained(ctx, "ns-1"); ok {
		t.Fatal("busy node reported drained")
	}
	if err := cl.EndJob(ctx, job, "ns-1"); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, "ns-1")

	// Unknown nodes: nothing runs there, and drain reports not found.
	if ok, err := c.IsDrained(ctx, "nope-7"); err != nil || !ok {
		t.Fatalf("unknown node: %v %v", ok, err)
	}
	if err := c.Drain(ctx, "nope-7", "x"); !errors.Is(err, slurm.ErrNodeNotFound) {
		t.Fatalf("want ErrNodeNotFound, got %v", err)
	}
}

// waitDrained polls: slurmctld completes a cancelled job asynchronously.
func waitDrained(t *testing.T, c slurm.Client, node string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		ok, err := c.IsDrained(ctx, node)
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never drained (last error %v)", node, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestNodeStateStrings covers the state words the CLI and status use.
func TestNodeStateStrings(t *testing.T) {
	for _, tc := range []struct {
		s    slurm.NodeState
		want string
	}{
		{slurm.NodeState{Base: "idle"}, "IDLE"},
		{slurm.NodeState{Base: "allocated", Flags: []string{"DRAIN"}, Reason: "r"}, "DRAINING (r)"},
		{slurm.NodeState{Base: "mixed", Flags: []string{"DRAIN"}}, "DRAINING"},
		{slurm.NodeState{Base: "idle", Flags: []string{"DRAIN", "NOT_RESPONDING"}}, "DRAINED"},
		{slurm.NodeState{Base: "down"}, "DOWN"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: got %q want %q", tc.s, got, tc.want)
		}
	}
}

// TestCommandTimeoutWithLingeringChild: a command that hangs past the
// timeout while a child it started keeps its output open (a wrapper script
// around the real sinfo, say) still ends the call with an error, instead
// of holding the NodeSet sync that made it until the child exits.
func TestCommandTimeoutWithLingeringChild(t *testing.T) {
	// Parallel: it waits on timers or CPU, and Go starts parallel tests
	// only after the serial ones, which measure the heap, have ended.
	t.Parallel()
	dir := t.TempDir()
	// The background sleep inherits stdout and stderr and outlives the
	// script, which is what the timeout kills.
	pids := filepath.Join(dir, "pids")
	script := "#!/bin/sh\nsleep 600 &\necho $! >>" + pids + "\nsleep 600\n"
	t.Cleanup(func() {
		b, _ := os.ReadFile(pids)
		for _, pid := range strings.Fields(string(b)) {
			_ = exec.Command("kill", pid).Run()
		}
	})
	for _, name := range slurm.Programs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := slurm.NewCommands(slurm.CommandsConfig{BinDir: dir, Timeout: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- c.Refresh(context.Background()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Refresh of a command killed at its timeout returned no error")
		}
		if !strings.Contains(err.Error(), "sinfo") {
			t.Fatalf("the error does not name the command: %v", err)
		}
	case <-time.After(2 * time.Minute):
		// Not a speed check: without a bound the call waits for the
		// child's 600 s.
		t.Fatal("Refresh still waits for the child of a command killed at its timeout")
	}
}

// TestCommandOutputBounded: a command that prints more than an answer may
// hold (here 80 MiB of JSON that never ends) is refused with an error
// saying so; serve keeps at most the bound of it.
func TestCommandOutputBounded(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '{\"nodes\":[{\"name\":\"'\nhead -c 83886080 /dev/zero | tr '\\0' n\n"
	for _, name := range slurm.Programs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := slurm.NewCommands(slurm.CommandsConfig{BinDir: dir})
	err := c.Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), "printed more than 64 MiB") {
		t.Fatalf("Refresh of an 80 MiB sinfo: %v", err)
	}
}
