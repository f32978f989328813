package freeport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

func TestPortsAreDistinctBindableAndOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	seen := map[int]bool{}
	for round := 0; round < 3; round++ {
		ps, err := Ports("127.0.0.1", 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 5 {
			t.Fatalf("got %d ports, want 5", len(ps))
		}
		for _, p := range ps {
			if p >= lo && p <= hi {
				t.Errorf("port %d is in the ephemeral range %d-%d", p, lo, hi)
			}
			if seen[p] {
				t.Errorf("port %d handed out twice", p)
			}
			seen[p] = true
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				t.Errorf("port %d: %v", p, err)
				continue
			}
			l.Close()
		}
	}
}

func TestPortsSkipsAPortInUse(t *testing.T) {
	p, err := Port("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("0.0.0.0", strconv.Itoa(p+1)))
	if err != nil {
		t.Skipf("port %d already taken: %v", p+1, err)
	}
	defer l.Close()
	if bindable("127.0.0.1", p+1) {
		t.Errorf("port %d is held on 0.0.0.0 but reported bindable on 127.0.0.1", p+1)
	}
}

// childDirEnv, when set, makes this test binary the child of
// TestReservationsHoldAcrossProcesses: it names the lock directory the
// child uses; childRangeEnv is the port range "LOW-HIGH" it takes from.
const (
	childDirEnv   = "FREEPORT_TEST_CHILD_DIR"
	childRangeEnv = "FREEPORT_TEST_CHILD_RANGE"
	childPorts    = 200
)

// childReport is what the child prints once it holds its ports.
type childReport struct {
	Ports    []int
	Sleeper  int // a process the child started and left running
	ErrorMsg string
}

// TestReservationsHoldAcrossProcesses runs this test binary again as a
// child that reserves ports, as another package's test binary would:
// while the child lives, this process is never given one of them; once
// the child is SIGKILLed (no clean-up runs), they can be reserved again,
// although a process the child started still runs.
func TestReservationsHoldAcrossProcesses(t *testing.T) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		reserveAsChild(dir)
		return
	}
	// A private lock directory: only this test's two processes lock
	// there, so what each sees is the other's doing, not that of other
	// test binaries running meanwhile.
	dir := t.TempDir()
	mu.Lock()
	saved := lockDir
	lockDir = dir
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); lockDir = saved; mu.Unlock() })

	// A window of the usual range, small enough that a process ignoring
	// the child's locks would all but surely pick some of its ports.
	low, high := portRange()
	low += rand.IntN(high - low - 400)
	high = low + 399

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestReservationsHoldAcrossProcesses$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, fmt.Sprintf("%s=%d-%d", childRangeEnv, low, high))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var rep childReport
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if rep.Sleeper > 0 {
			_ = syscall.Kill(rep.Sleeper, syscall.SIGKILL)
		}
	})
	if err := json.NewDecoder(stdout).Decode(&rep); err != nil {
		t.Fatalf("child did not report its ports: %v", err)
	}
	if rep.ErrorMsg != "" {
		t.Fatalf("child: %s", rep.ErrorMsg)
	}
	if len(rep.Ports) != childPorts {
		t.Fatalf("child reserved %d ports, want %d", len(rep.Ports), childPorts)
	}
	childs := map[int]bool{}
	for _, p := range rep.Ports {
		childs[p] = true
	}

	// Port by port, bypassing the random start: each is refused.
	for _, p := range rep.Ports {
		f, err := lock(p)
		if err == nil {
			f.Close()
			t.Errorf("port %d reserved by the child could be locked by the parent", p)
		} else if !errors.Is(err, errLocked) {
			t.Errorf("port %d: %v, want it reported as reserved by another process", p, err)
		}
	}
	// And through the allocator: the ports it hands out from the same
	// window are the others.
	mine, err := take("127.0.0.1", 100, low, high)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mine {
		if childs[p] {
			t.Errorf("port %d handed out to the parent while the child holds it", p)
		}
	}

	// The child dies without running any clean-up; the process it started
	// lives on and must not have kept the locks.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if syscall.Kill(rep.Sleeper, 0) != nil {
		t.Fatalf("the child's sleeper %d is not running: the check below would prove nothing", rep.Sleeper)
	}
	for _, p := range rep.Ports {
		f, err := lock(p)
		if err != nil {
			t.Errorf("port %d still reserved after its owner died: %v", p, err)
			continue
		}
		f.Close()
	}
}

// reserveAsChild is the child's side of TestReservationsHoldAcrossProcesses:
// it reserves ports in dir, starts a long sleep, reports both on stdout and
// waits until its stdin closes or it is killed. It never returns.
func reserveAsChild(dir string) {
	var rep childReport
	var low, high int
	if _, err := fmt.Sscanf(os.Getenv(childRangeEnv), "%d-%d", &low, &high); err != nil {
		rep.ErrorMsg = err.Error()
	} else {
		mu.Lock()
		lockDir = dir
		mu.Unlock()
		ps, err := take("127.0.0.1", childPorts, low, high)
		if err != nil {
			rep.ErrorMsg = err.Error()
		}
		rep.Ports = ps
		// Like a daemon given one of the ports: were the lock files
		// inherited, it would keep them after the child is gone.
		sleeper := exec.Command("sleep", "3600")
		if err := sleeper.Start(); err != nil {
			rep.ErrorMsg = err.Error()
		} else {
			rep.Sleeper = sleeper.Process.Pid
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
