// Package firstgc lets the heap of kubectl-vc reach 8 MB before its first
// garbage collection, where Go's default starts one at 4 MB. Imported by
// main for its init alone.
//
// Why: package initialization alone allocates a few MB in every command
// (client-go's scheme of every API group, prometheus, the cobra tree...),
// most of which stays live, so with the default every command ran a
// collection or two before doing anything: its mark workers start threads,
// and their write faults on shared pages cost TLB shootdowns between the
// two cores. A short command ('version', a list of a few objects) now ends
// before the heap reaches 8 MB and runs none; what it saved is in
// docs/development.md (Start-up).
//
// How: GOGC is 200 until the first collection ends, then what it was
// (100). Go's heap goal is GOGC% above the live heap and never below
// 4 MB x GOGC/100, so this moves the first goal from 4 to 8 MB and changes
// nothing after it: a long command, or serve, collects as before from its
// first collection on, which comes at most 4 MB later. A GOGC set in the
// environment is left as the user set it, so is one the program sets (serve
// sets 50), and GOMEMLIMIT applies throughout.
package firstgc

import (
	"os"
	"runtime"
	"runtime/debug"
)

// startPercent is GOGC until the first collection.
const startPercent = 200

func init() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	after := debug.SetGCPercent(startPercent)
	// The first collection finds the sentinel unreachable and queues its
	// finalizer. It has a pointer and is larger than 16 bytes, so it is
	// not one of the tiny allocations that share a block (whose
	// finalizers may never run).
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { restore(after) })
}

// restore sets GOGC back to after, unless someone set it since init:
// serve sets its own (50) when the environment sets none, and that stands.
// Setting then undoing leaves theirs whichever of the two goes first.
func restore(after int) {
	if p := debug.SetGCPercent(after); p != startPercent {
		debug.SetGCPercent(p)
	}
}

type sentinel struct {
	_ *int
	_ [16]byte
}
