package nodeset

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

func scheduled(ns *slinkyv1beta1.NodeSet, start time.Time, duration string, flags ...string) {
	ns.Spec.UpdateStrategy = slinkyv1beta1.NodeSetUpdateStrategy{Type: slinkyv1beta1.ScheduledUpdateNodeSetStrategyType,
		ScheduledUpdate: &slinkyv1beta1.ScheduledUpdateNodeSetStrategy{StartTime: &metav1.Time{Time: start}, Duration: duration, Flags: flags}}
}

// TestWindowOf: the spec's window, with the schema's default duration,
// MAINT and IGNORE_JOBS always, the user's flags upper case; a duration
// that is not one is refused with the value in the message.
func TestWindowOf(t *testing.T) {
	start := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	ns := testNodeSet(1)
	scheduled(ns, start, "", "daily", "MAINT")
	w, err := windowOf(ns)
	if err != nil {
		t.Fatal(err)
	}
	if !w.start.Equal(start) || !w.end.Equal(start.Add(30*time.Minute)) || !w.recurring ||
		!slices.Equal(w.flags, []string{"DAILY", "IGNORE_JOBS", "MAINT"}) {
		t.Errorf("window %+v", w)
	}
	for _, bad := range []string{"half an hour", "-5m", "0s"} {
		scheduled(ns, start, bad)
		if _, err := windowOf(ns); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("duration %q: %v", bad, err)
		}
	}
	ns.Spec.UpdateStrategy.ScheduledUpdate.StartTime = nil
	if _, err := windowOf(ns); err == nil {
		t.Error("no start time accepted")
	}
}

// TestPlanReservation: what is done with the reservation for each state
// Slurm may hold it in.
func TestPlanReservation(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	nodes := []string{"w-0", "w-1"}
	future := window{start: now.Add(time.Hour), end: now.Add(90 * time.Minute), flags: []string{"IGNORE_JOBS", "MAINT"}}
	open := window{start: now.Add(-10 * time.Minute), end: now.Add(20 * time.Minute), flags: future.flags}
	over := window{start: now.Add(-time.Hour), end: now.Add(-30 * time.Minute), flags: future.flags}
	heldAs := func(w window, nodes ...string) *slurm.Reservation {
		return &slurm.Reservation{Name: "r", Start: w.start, End: w.end, Nodes: nodes,
			Flags: append(slices.Clone(w.flags), "SPEC_NODES"), Users: []string{"slurm"}}
	}
	daily := future
	daily.flags, daily.recurring = []string{"DAILY", "IGNORE_JOBS", "MAINT"}, true
	nextDay := heldAs(daily, nodes...)
	nextDay.Start, nextDay.End = nextDay.Start.Add(24*time.Hour), nextDay.End.Add(24*time.Hour)
	moved := future
	moved.start, moved.end = future.start.Add(time.Hour), future.end.Add(time.Hour)
	noIgnore := heldAs(future, nodes...)
	noIgnore.Flags = []string{"MAINT", "SPEC_NODES"}

	for _, tc := range []struct {
		name  string
		w     window
		held  *slurm.Reservation
		nodes []string
		step  reservationStep
		check func(slurm.Reservation) bool
	}{
		{"none, window ahead: made", future, nil, nodes, resvCreate, func(r slurm.Reservation) bool {
			return r.Start.Equal(future.start) && r.End.Equal(future.end) && slices.Equal(r.Nodes, nodes) &&
				slices.Equal(r.Users, []string{"slurm"}) && slices.Equal(r.Flags, future.flags)
		}},
		{"none, window open: made from now to its end", open, nil, nodes, resvCreate, func(r slurm.Reservation) bool {
			return r.Start.Equal(now) && r.End.Equal(open.end)
		}},
		{"none, window over (Slurm removed it): not made again", over, nil, nodes, resvNothing, nil},
		{"none, no Slurm node yet: not made", future, nil, nil, resvNothing, nil},
		{"held as asked: nothing", future, heldAs(future, nodes...), nodes, resvNothing, nil},
		{"held, made after its start: nothing", open, &slurm.Reservation{Start: now.Add(-5 * time.Minute), End: open.end,
			Nodes: nodes, Flags: []string{"IGNORE_JOBS", "MAINT", "SPEC_NODES"}, Users: []string{"slurm"}}, nodes, resvNothing, nil},
		{"open, a node more: the nodes only", open, heldAs(open, "w-0"), nodes, resvNodes, func(r slurm.Reservation) bool {
			return r.Start.IsZero() && slices.Equal(r.Nodes, nodes)
		}},
		{"open, start moved: left alone", moved, heldAs(open, nodes...), nodes, resvNothing, nil},
		{"ahead, start moved: updated", moved, heldAs(future, nodes...), nodes, resvUpdate, func(r slurm.Reservation) bool {
			return r.Start.Equal(moved.start) && r.End.Equal(moved.end)
		}},
		{"ahead, a node fewer: updated", future, heldAs(future, nodes...), nodes[:1], resvUpdate, func(r slurm.Reservation) bool {
			return slices.Equal(r.Nodes, nodes[:1])
		}},
		{"ahead, a flag missing: made again", future, noIgnore, nodes, resvRecreate, nil},
		{"ahead, moved into the past: deleted", over, heldAs(future, nodes...), nodes, resvDelete, nil},
		{"recurring, Slurm's next occurrence: kept", daily, nextDay, nodes, resvNothing, nil},
		{"recurring, next occurrence, a node more: nodes only", daily, func() *slurm.Reservation {
			r := *nextDay
			r.Nodes = nodes[:1]
			return &r
		}(), nodes, resvUpdate, func(r slurm.Reservation) bool { return r.Start.IsZero() && slices.Equal(r.Nodes, nodes) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step, want := planReservation("r", tc.w, tc.held, tc.nodes, now)
			if step != tc.step {
				t.Fatalf("step %d, want %d (%+v)", step, tc.step, want)
			}
			if tc.check != nil && !tc.check(want) {
				t.Errorf("reservation %+v", want)
			}
		})
	}
}

// scheduledFixture is a NodeSet of two running pods made from an older
// template, with a ScheduledUpdate window from start, and a Slurm whose
// nodes w-0 and w-1 are idle.
func scheduledFixture(t *testing.T, start time.Time, sl *fakeSlurm, mutate ...func(*slinkyv1beta1.NodeSet)) *fakeNodeSetController {
	t.Helper()
	old := testNodeSet(2)
	pods := []runtime.Object{runningPod(t, old, 0), runningPod(t, old, 1)}
	ns := old.DeepCopy()
	ns.Spec.Slurmd.Image = "slurmd:2"
	scheduled(ns, start, "30m")
	for _, m := range mutate {
		m(ns)
	}
	sl.byState = true
	sl.nodes = map[string]slurm.NodeState{"w-0": {Name: "w-0", Base: "idle"}, "w-1": {Name: "w-1", Base: "idle"}}
	return newFakeNodeSetController(t, sl, ns, pods...)
}

func (f *fakeNodeSetController) finalizers(t *testing.T) []string {
	t.Helper()
	ns, err := f.vc.SlinkyV1beta1().NodeSets(testNamespace).Get(context.Background(), "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Finalizers
}

// TestSyncScheduledUpdateWindow: a window ahead makes the reservation over
// the NodeSet's nodes, and the finalizer, and replaces no pod; once Slurm
// holds the window open, the outdated pods are drained and replaced.
func TestSyncScheduledUpdateWindow(t *testing.T) {
	sl := &fakeSlurm{}
	f := scheduledFixture(t, time.Now().Add(time.Hour), sl)
	f.sync(t)
	r, ok := sl.resv["SlurmOperatorMaint-w"]
	if !ok || !slices.Equal(r.Nodes, []string{"w-0", "w-1"}) || !slices.Contains(r.Flags, "MAINT") || !slices.Contains(r.Flags, "IGNORE_JOBS") {
		t.Fatalf("reservation %+v (held %v)", r, ok)
	}
	if !slices.Contains(f.finalizers(t), slinkyv1beta1.FinalizerNodeSetReservation) {
		t.Fatalf("finalizers %v", f.finalizers(t))
	}
	if w := f.podWrites(); len(w) != 0 || len(sl.drains) != 0 {
		t.Fatalf("window ahead: pod writes %v, drains %v", w, sl.drains)
	}
	f.sync(t)
	if !slices.Equal(sl.resvCalls, []string{"create SlurmOperatorMaint-w w-0,w-1"}) {
		t.Errorf("a second sync wrote the reservation again: %v", sl.resvCalls)
	}

	// Slurm's window opens.
	r.Start = time.Now().Add(-time.Second)
	sl.resv[r.Name] = r
	f.sync(t)
	if w, want := f.podWrites(), []string{"cordon w-0", "cordon w-1", "delete w-0", "delete w-1"}; !slices.Equal(w, want) {
		t.Fatalf("window open: pod writes %v, want %v", w, want)
	}
	if want := []string{"w-0: " + reasonUpdate, "w-1: " + reasonUpdate}; !slices.Equal(sl.drains, want) {
		t.Errorf("drains %v, want %v", sl.drains, want)
	}
}

// TestSyncScheduledUpdateDeleted: a NodeSet being deleted (or no longer
// ScheduledUpdate) has its reservation deleted, then its finalizer removed.
func TestSyncScheduledUpdateDeleted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*slinkyv1beta1.NodeSet)
	}{
		{"deleted", func(ns *slinkyv1beta1.NodeSet) { ns.DeletionTimestamp = &metav1.Time{Time: time.Now()} }},
		{"strategy changed", func(ns *slinkyv1beta1.NodeSet) {
			ns.Spec.UpdateStrategy = slinkyv1beta1.NodeSetUpdateStrategy{Type: slinkyv1beta1.OnDeleteNodeSetStrategyType}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := &fakeSlurm{resv: map[string]slurm.Reservation{"SlurmOperatorMaint-w": {Name: "SlurmOperatorMaint-w"}}}
			f := scheduledFixture(t, time.Now().Add(time.Hour), sl, func(ns *slinkyv1beta1.NodeSet) {
				ns.Finalizers = []string{"other/keep", slinkyv1beta1.FinalizerNodeSetReservation}
				tc.mutate(ns)
			})
			f.sync(t)
			if !slices.Equal(sl.resvCalls, []string{"delete SlurmOperatorMaint-w"}) || len(sl.resv) != 0 {
				t.Fatalf("reservation calls %v, held %v", sl.resvCalls, sl.resv)
			}
			if fins := f.finalizers(t); !slices.Equal(fins, []string{"other/keep"}) {
				t.Fatalf("finalizers %v, want other/keep only", fins)
			}
		})
	}
}

// TestSyncScheduledUpdateUnsupported: a Slurm whose interface cannot write
// reservations (Slurm 24.11's slurmrestd) gets none; SpecSupported says
// so and why, and no pod is replaced, as with OnDelete.
func TestSyncScheduledUpdateUnsupported(t *testing.T) {
	sl := &fakeSlurm{resvErr: slurm.ErrReservationsUnsupported}
	f := scheduledFixture(t, time.Now().Add(-time.Minute), sl)
	f.sync(t)
	if len(sl.resvCalls) != 0 || len(f.finalizers(t)) != 0 {
		t.Fatalf("reservation calls %v, finalizers %v", sl.resvCalls, f.finalizers(t))
	}
	if w := f.podWrites(); len(w) != 0 {
		t.Fatalf("pod writes %v", w)
	}
	// The recorder holds the UnsupportedSpec event, SpecSupported's message.
	var msgs []string
	for rec := fakeEvents(f.c); len(rec.Events) > 0; {
		msgs = append(msgs, <-rec.Events)
	}
	found := slices.ContainsFunc(msgs, func(m string) bool {
		return strings.Contains(m, "UnsupportedSpec") && strings.Contains(m, "updateStrategy ScheduledUpdate") &&
			strings.Contains(m, slurm.ErrReservationsUnsupported.Error()) && strings.Contains(m, "as with OnDelete")
	})
	if !found {
		t.Fatalf("events %q", msgs)
	}
}

// TestScheduledUpdateNoteKeptWhileSlurmUnreachable: a sync that cannot
// reach Slurm cannot ask whether it makes reservations; SpecSupported then
// says what it said last, rather than turning True until Slurm is back.
func TestScheduledUpdateNoteKeptWhileSlurmUnreachable(t *testing.T) {
	ns := testNodeSet(1)
	scheduled(ns, time.Now(), "10m")
	note := "updateStrategy ScheduledUpdate needs a Slurm reservation: reservations cannot be written: slurmrestd at http://x speaks REST v0.0.42" +
		": no reservation is made and pods are replaced only when deleted, as with OnDelete"
	ns.Status.Conditions = []metav1.Condition{{Type: conditions.SpecSupported, Status: metav1.ConditionFalse, Reason: "Unsupported",
		Message: "ssh is not implemented: pods run no sshd; " + note}}
	s := &nodeSetSync{set: ns, slurmErr: errors.New("connection refused")}
	ctx := t.Context()
	if got := s.scheduledUpdateNote(ctx); got != note {
		t.Errorf("note %q, want %q", got, note)
	}
	ns.Status.Conditions = nil
	if got := s.scheduledUpdateNote(ctx); got != "" {
		t.Errorf("nothing said before: note %q", got)
	}
	ns.Spec.UpdateStrategy.ScheduledUpdate.Duration = "soon"
	if got := s.scheduledUpdateNote(ctx); !strings.Contains(got, `"soon"`) || !strings.Contains(got, "as with OnDelete") {
		t.Errorf("bad duration: note %q", got)
	}
}

// TestSyncScheduledUpdateWindowOver: once Slurm has removed a one-off
// reservation at its end, none is made again, and the finalizer goes.
func TestSyncScheduledUpdateWindowOver(t *testing.T) {
	sl := &fakeSlurm{}
	f := scheduledFixture(t, time.Now().Add(-time.Hour), sl, func(ns *slinkyv1beta1.NodeSet) {
		ns.Finalizers = []string{slinkyv1beta1.FinalizerNodeSetReservation}
	})
	f.sync(t)
	if len(sl.resvCalls) != 0 {
		t.Fatalf("reservation calls %v", sl.resvCalls)
	}
	if fins := f.finalizers(t); len(fins) != 0 {
		t.Fatalf("finalizers %v", fins)
	}
	if w := f.podWrites(); len(w) != 0 {
		t.Fatalf("pod writes %v after the window", w)
	}
}
