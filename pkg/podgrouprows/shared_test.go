package podgrouprows

import (
	"slices"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

func group(ns, name, rv string) *v1beta1.PodGroup {
	pg := &v1beta1.PodGroup{}
	pg.Namespace, pg.Name, pg.ResourceVersion = ns, name, rv
	return pg
}

// TestFanOutFeedsEveryStore: what the reflector writes reaches each store,
// rows and PodGroups alike, and the list counts as synced only once every
// store holds it.
func TestFanOutFeedsEveryStore(t *testing.T) {
	a, b := NewNames(), NewNames()
	var listed atomic.Bool
	f := &fanOut{Store: a, all: []cache.Store{a, b}, listed: &listed}
	list := []any{&Row{Namespace: "x", Name: "one"}, &Row{Namespace: "y", Name: "two"}}
	if err := f.Replace(list, "5"); err != nil {
		t.Fatal(err)
	}
	if !listed.Load() {
		t.Error("not synced after the list")
	}
	if err := f.Add(group("x", "three", "6")); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete(cache.DeletedFinalStateUnknown{Key: "y/two", Obj: group("y", "two", "7")}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Names{a, b} {
		if !s.Has("x", "one") || !s.Has("x", "three") || s.Has("y", "two") || s.Len() != 2 {
			t.Errorf("store holds %v, want x/one and x/three", s.ListKeys())
		}
		if rv := s.LastStoreSyncResourceVersion(); rv != "7" {
			t.Errorf("resourceVersion %q, want 7", rv)
		}
	}
	if keys := a.ListKeys(); !slices.Contains(keys, "x/one") {
		t.Errorf("keys %v", keys)
	}
	if err := f.Add("not a podgroup"); err == nil {
		t.Error("a string was stored")
	}
}

// TestSharedRefusesLateStores: a store added once the rows flow would
// never get the first list.
func TestSharedRefusesLateStores(t *testing.T) {
	s := &Shared{lw: &ListWatch{}}
	s.Start(make(chan struct{})) // no store: nothing runs
	if err := s.Feed(NewNames()); err == nil {
		t.Fatal("a store was fed after Start")
	}
	if s.HasSynced() {
		t.Error("synced without a list")
	}
}
