package cluster

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
)

// TestControlPlaneDiesWithItsParent starts a control plane in a child
// process (this test binary, re-executed) and SIGKILLs that child: etcd and
// kube-apiserver must not outlive it, so a crashed or timed-out test leaves
// nothing behind.
func TestControlPlaneDiesWithItsParent(t *testing.T) {
	if os.Getenv("KUBECTL_VC_ORPHAN_CHILD") == "1" {
		// This test binary re-executed as the child: it needs a control
		// plane of its own, which its SIGKILL must not leak.
		orphanChild()
	}
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
// run from the test itself in the re-executed test binary: it starts a control plane in the directory the parent
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
