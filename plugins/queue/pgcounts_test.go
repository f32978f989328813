package queue

import (
	"slices"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

func countedPG(ns, name, queue string, phase v1beta1.PodGroupPhase, rv string) *v1beta1.PodGroup {
	pg := &v1beta1.PodGroup{}
	pg.Namespace, pg.Name, pg.ResourceVersion, pg.Spec.Queue, pg.Status.Phase = ns, name, rv, queue, phase
	return pg
}

// TestPodGroupCounts follows the counts through a list and every kind of
// change, and checks which queues each change hands on.
func TestPodGroupCounts(t *testing.T) {
	var handed []string
	s := newPodGroupCounts(func(q string) { handed = append(handed, q) })
	take := func() []string {
		out := handed
		handed = nil
		slices.Sort(out)
		return out
	}
	expect := func(step string, wantHanded []string, want map[string]rules.PodGroupCounts) {
		t.Helper()
		if got := take(); !slices.Equal(got, wantHanded) {
			t.Errorf("%s: handed on %v, want %v", step, got, wantHanded)
		}
		for q, w := range want {
			if got := s.counts(q); got != w {
				t.Errorf("%s: counts of %s %+v, want %+v", step, q, got, w)
			}
		}
	}
	if s.hasSynced() {
		t.Fatal("synced before the first list")
	}
	// The list as the Table reflector gives it: rows.
	if err := s.Replace([]any{
		&podgrouprows.Row{Namespace: "a", Name: "p1", Queue: "q1", Phase: v1beta1.PodGroupRunning},
		&podgrouprows.Row{Namespace: "a", Name: "p2", Queue: "q1", Phase: v1beta1.PodGroupPending},
		&podgrouprows.Row{Namespace: "b", Name: "p3"}, // default queue, no phase yet
	}, "10"); err != nil {
		t.Fatal(err)
	}
	if !s.hasSynced() || s.LastStoreSyncResourceVersion() != "10" {
		t.Fatalf("after the list: synced %t, resourceVersion %q", s.hasSynced(), s.LastStoreSyncResourceVersion())
	}
	expect("list", []string{keys.DefaultQueue, "q1"}, map[string]rules.PodGroupCounts{
		"q1":              {Running: 1, Pending: 1, Total: 2},
		keys.DefaultQueue: {Total: 1},
		"q2":              {},
	})

	// The same object again: nothing to hand on.
	if err := s.Update(countedPG("a", "p1", "q1", v1beta1.PodGroupRunning, "11")); err != nil {
		t.Fatal(err)
	}
	expect("unchanged update", nil, nil)
	if s.LastStoreSyncResourceVersion() != "11" {
		t.Errorf("resourceVersion %q after an update at 11", s.LastStoreSyncResourceVersion())
	}

	if err := s.Update(countedPG("a", "p1", "q1", v1beta1.PodGroupCompleted, "12")); err != nil {
		t.Fatal(err)
	}
	expect("phase change", []string{"q1"}, map[string]rules.PodGroupCounts{"q1": {Completed: 1, Pending: 1, Total: 2}})

	if err := s.Update(countedPG("a", "p2", "q2", v1beta1.PodGroupPending, "13")); err != nil {
		t.Fatal(err)
	}
	expect("queue move", []string{"q1", "q2"}, map[string]rules.PodGroupCounts{
		"q1": {Completed: 1, Total: 1}, "q2": {Pending: 1, Total: 1},
	})

	if err := s.Add(countedPG("b", "p4", "q2", v1beta1.PodGroupInqueue, "14")); err != nil {
		t.Fatal(err)
	}
	expect("creation", []string{"q2"}, map[string]rules.PodGroupCounts{"q2": {Pending: 1, Inqueue: 1, Total: 2}})

	if err := s.Delete(cache.DeletedFinalStateUnknown{Key: "b/p3", Obj: countedPG("b", "p3", "", "", "")}); err != nil {
		t.Fatal(err)
	}
	expect("deletion (missed, from a relist)", []string{keys.DefaultQueue}, map[string]rules.PodGroupCounts{keys.DefaultQueue: {}})
	if err := s.Delete(countedPG("b", "p3", "", "", "15")); err != nil {
		t.Fatal(err)
	}
	expect("deletion of what is gone", nil, nil)

	if keys := s.ListKeys(); len(keys) != 3 || len(s.List()) != 3 {
		t.Errorf("keys %v, %d listed, want 3", keys, len(s.List()))
	}
	if obj, ok, _ := s.GetByKey("b/p4"); !ok || obj.(*v1beta1.PodGroup).Status.Phase != v1beta1.PodGroupInqueue {
		t.Errorf("b/p4: %v %t", obj, ok)
	}

	// A relist after a lost watch (here of objects, as where the CRD has no
	// printer columns): only the queues whose counts differ are handed on
	// (q1 lost its podgroup, q3 is new; q2 is as it was).
	if err := s.Replace([]any{
		countedPG("a", "p2", "q2", v1beta1.PodGroupPending, ""),
		countedPG("b", "p4", "q2", v1beta1.PodGroupInqueue, ""),
		countedPG("c", "p5", "q3", v1beta1.PodGroupRunning, ""),
	}, "20"); err != nil {
		t.Fatal(err)
	}
	expect("relist", []string{"q1", "q3"}, map[string]rules.PodGroupCounts{
		"q1": {}, "q2": {Pending: 1, Inqueue: 1, Total: 2}, "q3": {Running: 1, Total: 1},
	})

	if err := s.Add(&v1beta1.Queue{}); err == nil {
		t.Error("a Queue was stored as a podgroup")
	}
}
