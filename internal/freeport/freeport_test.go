package freeport

import (
	"net"
	"strconv"
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
