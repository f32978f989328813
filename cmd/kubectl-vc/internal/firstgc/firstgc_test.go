package firstgc

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// gcPercent is the current GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// afterCollections is GOGC once the first collection's finalizers have
// run (collections until GOGC changes, or 200 ms).
func afterCollections() int {
	before := gcPercent()
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if p := gcPercent(); p != before {
			return p
		}
	}
	return gcPercent()
}

// TestGOGC: in a process of its own each (init runs once), GOGC is 200
// from init to the first collection and 100 after it; a GOGC from the
// environment is left as it is; so is one the program sets before the
// first collection, as serve sets 50.
func TestGOGC(t *testing.T) {
	switch os.Getenv("FIRSTGC_CHILD") {
	case "":
	case "default":
		if p := gcPercent(); p != startPercent {
			t.Fatalf("GOGC after init = %d, want %d", p, startPercent)
		}
		if p := afterCollections(); p != 100 {
			t.Fatalf("GOGC after the first collection = %d, want 100", p)
		}
		return
	case "environment":
		if p := gcPercent(); p != 50 {
			t.Fatalf("GOGC=50 in the environment: GOGC after init = %d", p)
		}
		if p := afterCollections(); p != 50 {
			t.Fatalf("GOGC=50 in the environment: GOGC after a collection = %d", p)
		}
		return
	case "program":
		debug.SetGCPercent(50)
		if p := afterCollections(); p != 50 {
			t.Fatalf("GOGC set to 50 by the program: GOGC after a collection = %d", p)
		}
		return
	default:
		t.Fatalf("FIRSTGC_CHILD=%s", os.Getenv("FIRSTGC_CHILD"))
	}
	for _, tc := range []struct{ child, gogc string }{{"default", ""}, {"environment", "50"}, {"program", ""}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGOGC$", "-test.v")
		cmd.Env = []string{"FIRSTGC_CHILD=" + tc.child}
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "GOGC=") && !strings.HasPrefix(e, "FIRSTGC_CHILD=") {
				cmd.Env = append(cmd.Env, e)
			}
		}
		if tc.gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+tc.gogc)
		}
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Errorf("%s: %v\n%s", tc.child, err, out)
		}
	}
}
