package nodeset

import (
	goruntime "runtime"
	"strings"
	"testing"
)

// TestSyncRefusesHugeOrdinalPadding: ordinalPadding is an integer the
// schema does not bound, and each pod's name was padded to it: 1 000 000
// made every name (and its hostname, labels, claim names) a megabyte, for
// pods no API server admits (a hostname is at most 63 characters). Such a
// NodeSet is refused with SpecSupported=False and a Warning saying why,
// nothing is written, and the sync allocates no more than for a NodeSet
// without padding.
func TestSyncRefusesHugeOrdinalPadding(t *testing.T) {
	allocated := func(padding int) (uint64, *fakeNodeSetController) {
		ns := testNodeSet(100)
		ns.Spec.OrdinalPadding = padding
		f := newFakeNodeSetController(t, &fakeSlurm{}, ns)
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		f.sync(t)
		goruntime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, f
	}
	plain, _ := allocated(0)
	huge, f := allocated(1_000_000)
	if w := f.podWrites(); len(w) != 0 {
		t.Fatalf("a NodeSet whose pod names cannot be hostnames: %d pod writes, first %.80s", len(w), w[0])
	}
	var warned bool
	for done := false; !done; {
		select {
		case e := <-fakeEvents(f.c).Events:
			warned = warned || strings.Contains(e, "UnsupportedSpec") && strings.Contains(e, "ordinalPadding 1000000")
		default:
			done = true
		}
	}
	if !warned {
		t.Fatal("no UnsupportedSpec Warning names ordinalPadding")
	}
	if huge > plain+16<<20 {
		t.Fatalf("a sync with ordinalPadding 1000000 allocated %d MiB, one without %d MiB", huge>>20, plain>>20)
	}
}
