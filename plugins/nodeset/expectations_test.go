package nodeset

import (
	"testing"
	"time"
)

func TestExpectations(t *testing.T) {
	now := time.Unix(1000, 0)
	e := newExpectations(time.Minute)
	e.now = func() time.Time { return now }

	if !e.satisfied("a/x") {
		t.Fatal("no record must be satisfied")
	}
	e.expectCreations("a/x", 2)
	e.expectDeletion("a/x", "uid-1")
	if e.satisfied("a/x") {
		t.Fatal("pending creations must block")
	}
	e.CreationObserved("a/x")
	e.CreationObserved("a/x")
	if e.satisfied("a/x") {
		t.Fatal("pending deletion must block")
	}
	// A deletion is seen once per pod: seeing another pod go, or the same
	// pod twice (terminating, then gone), settles nothing more.
	e.DeletionObserved("a/x", "uid-2")
	if e.satisfied("a/x") {
		t.Fatal("another pod's deletion settled ours")
	}
	e.DeletionObserved("a/x", "uid-1")
	if !e.satisfied("a/x") {
		t.Fatal("all observed must be satisfied")
	}
	e.expectDeletion("a/x", "uid-3")
	e.DeletionObserved("a/x", "uid-1")
	if e.satisfied("a/x") {
		t.Fatal("a pod seen twice settled a later deletion")
	}
	e.DeletionObserved("a/x", "uid-3")
	// Extra observations (pods someone else created) never go negative:
	// a later expectation still blocks.
	e.CreationObserved("a/x")
	e.CreationObserved("a/x")
	e.expectCreations("a/x", 1)
	if e.satisfied("a/x") {
		t.Fatal("surplus observations must not pre-pay later expectations")
	}
	// Other keys are independent.
	if !e.satisfied("a/y") {
		t.Fatal("keys leak into each other")
	}
	// Timeout: a lost event stops blocking after the timeout, and the
	// expired record is dropped.
	now = now.Add(61 * time.Second)
	if !e.satisfied("a/x") || e.has("a/x") {
		t.Fatal("expired record must be satisfied and dropped")
	}
	e.expectCreations("a/x", 1)
	e.forget("a/x")
	if e.has("a/x") || !e.satisfied("a/x") {
		t.Fatal("forget must drop the record")
	}
}
