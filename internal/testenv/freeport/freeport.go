// Package freeport hands out TCP ports for daemons the tests start (etcd,
// kube-apiserver, slurmctld, slurmd, slurmrestd...).
//
// Asking the kernel for port 0 returns a port from its ephemeral range, the
// same range it takes source ports of outgoing connections from. Between
// closing that listener and the daemon binding the port, any connection on
// the machine (a test's client, another suite running in parallel) may take
// it as its source port, and the daemon fails with "Address already in
// use". Ports below the ephemeral range are never handed out that way, so
// only another process binding explicitly can race us.
//
// The other processes that bind there are the other test binaries: 'go test
// ./...' runs several packages at once, each handing ports to its own
// daemons. A port found free is not bound until its daemon starts, so two
// binaries may both find it free. Each port handed out is therefore
// reserved for the life of this process with an exclusive flock on
// os.TempDir()/kubectl-vc-ports/<port>, and a port another process holds
// is skipped. The lock
// file stays open until the process exits, and the kernel drops the lock
// then, however the process ends (a crash or SIGKILL included), so no
// reservation outlives its owner.
package freeport

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// lowest is the first port handed out: above the well-known and most
// registered service ports in common use on developer machines.
const lowest = 15000

var (
	mu sync.Mutex
	// held are the lock files of the ports this process handed out. They
	// are never closed: closing one would end its reservation, while the
	// daemon given the port may still start or restart on it.
	held = map[int]*os.File{}
	// lockDir holds the per-port lock files, shared by every process on
	// the machine that uses this package; tests point it elsewhere.
	lockDir = filepath.Join(os.TempDir(), "kubectl-vc-ports")
)

// errLocked says another process (or another descriptor) holds the port.
var errLocked = errors.New("reserved by another process")

// Ports returns n distinct ports on which addr (an IP, "" for all) accepts
// a TCP listener now, outside the kernel's ephemeral range, and that no
// other process using this package has reserved.
func Ports(addr string, n int) ([]int, error) {
	low, high := portRange()
	return take(addr, n, low, high)
}

// portRange is where ports are taken from: below the ephemeral range.
func portRange() (int, int) {
	elo, ehi := ephemeralRange()
	low, high := lowest, elo-1
	if high-low < 1000 {
		// An unusual ephemeral range leaves no room below it: use the
		// range above it.
		low, high = ehi+1, 65535
	}
	return low, high
}

func take(addr string, n, low, high int) ([]int, error) {
	mu.Lock()
	defer mu.Unlock()
	// World-writable with the sticky bit, like /tmp: tests run as root and
	// as other users share the reservations. MkdirAll's mode is cut by the
	// umask, hence the Chmod when this process made it.
	if _, err := os.Stat(lockDir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(lockDir, 0o777); err != nil {
			return nil, fmt.Errorf("freeport: %w", err)
		}
		_ = os.Chmod(lockDir, 0o777|fs.ModeSticky)
	}
	span := high - low + 1
	var ports []int
	var lockErr error
	start := rand.IntN(span)
	for i := 0; i < span && len(ports) < n; i++ {
		p := low + (start+i)%span
		if held[p] != nil {
			continue
		}
		// Lock first, then check: once locked, no other process using
		// this package can be between its own check and its daemon's
		// bind on this port.
		f, err := lock(p)
		if err != nil {
			if !errors.Is(err, errLocked) {
				lockErr = err
			}
			continue
		}
		if !bindable(addr, p) {
			f.Close() // ends the reservation: nobody is given the port
			continue
		}
		held[p] = f
		ports = append(ports, p)
	}
	if len(ports) < n {
		if lockErr != nil {
			return nil, fmt.Errorf("freeport: only %d of %d ports free in %d-%d (last lock error: %v)", len(ports), n, low, high, lockErr)
		}
		return nil, fmt.Errorf("freeport: only %d of %d ports free in %d-%d", len(ports), n, low, high)
	}
	return ports, nil
}

// lock takes the exclusive flock of port p's file in lockDir, or returns
// errLocked when someone else holds it. The file is opened close-on-exec
// (as os.Open does), so that the daemons this process starts do not
// inherit the lock and keep it after this process is gone.
func lock(p int) (*os.File, error) {
	path := filepath.Join(lockDir, strconv.Itoa(p))
	// Read-only is enough for flock, and lets another user open a file
	// this one created. Creating only when missing: Linux refuses O_CREAT
	// on another user's file in a sticky directory (fs.protected_regular).
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("port %d: %w", p, errLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// Port returns one port as Ports does.
func Port(addr string) (int, error) {
	ps, err := Ports(addr, 1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}

func bindable(addr string, p int) bool {
	// Check the loopback and the wildcard address too: a daemon told to use
	// 127.0.0.1:p fails if something holds 0.0.0.0:p, and the other way.
	for _, a := range []string{addr, "127.0.0.1", "0.0.0.0"} {
		l, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(p)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

func ephemeralRange() (int, int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && lo > 0 && hi >= lo {
				return lo, hi
			}
		}
	}
	return 32768, 60999 // Linux's default
}

// Addr returns "127.0.0.1:PORT" for a port from Ports, failing tb if there
// is none.
func Addr(tb testing.TB) string {
	tb.Helper()
	p, err := Port("127.0.0.1")
	if err != nil {
		tb.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
}
