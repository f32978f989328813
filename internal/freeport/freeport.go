// Package freeport hands out TCP ports for daemons the tests start (etcd,
// kube-apiserver, slurmctld, slurmd, slurmrestd...).
//
// Asking the kernel for port 0 returns a port from its ephemeral range, the
// same range it takes source ports of outgoing connections from. Between
// closing that listener and the daemon binding the port, any connection on
// the machine (a test's client, another suite running in parallel) may take
// it as its source port, and the daemon fails with "Address already in
// use". Ports below the ephemeral range are never handed out that way, so
// only another process binding explicitly can race us; a random start and a
// per-process record make that unlikely too.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lowest is the first port handed out: above the well-known and most
// registered service ports in common use on developer machines.
const lowest = 15000

var (
	mu    sync.Mutex
	given = map[int]bool{}
)

// Ports returns n distinct ports on which addr (an IP, "" for all) accepts
// a TCP listener now, outside the kernel's ephemeral range.
func Ports(addr string, n int) ([]int, error) {
	mu.Lock()
	defer mu.Unlock()
	elo, ehi := ephemeralRange()
	low, high := lowest, elo-1
	if high-low < 1000 {
		// An unusual ephemeral range leaves no room below it: use the
		// range above it.
		low, high = ehi+1, 65535
	}
	span := high - low + 1
	var ports []int
	start := rand.IntN(span)
	for i := 0; i < span && len(ports) < n; i++ {
		p := low + (start+i)%span
		if given[p] || !bindable(addr, p) {
			continue
		}
		given[p] = true
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("freeport: only %d of %d ports free in %d-%d", len(ports), n, low, high)
	}
	return ports, nil
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
