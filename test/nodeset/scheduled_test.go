package nodeset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// scheduledStrategy is a ScheduledUpdate window from start, ten minutes long.
func scheduledStrategy(start time.Time) func(*slinkyv1beta1.NodeSet) {
	return func(ns *slinkyv1beta1.NodeSet) {
		ns.Spec.UpdateStrategy = slinkyv1beta1.NodeSetUpdateStrategy{
			Type: slinkyv1beta1.ScheduledUpdateNodeSetStrategyType,
			ScheduledUpdate: &slinkyv1beta1.ScheduledUpdateNodeSetStrategy{
				StartTime: &metav1.Time{Time: start.Truncate(time.Second)}, Duration: "10m"},
		}
	}
}

// reservation reads the reservation from Slurm apart from the controller:
// with the test's client and with scontrol (its one-line form, "" when
// slurmctld holds none).
func (e *env) reservation(name string) (r slurm.Reservation, ok bool, show string) {
	e.T.Helper()
	rc, isRC := e.Slurm.Client().(slurm.ReservationClient)
	if !isRC {
		e.T.Fatalf("the %s client reads no reservations", e.Slurm.Name())
	}
	r, ok, err := rc.Reservation(e.Ctx, name)
	if err != nil {
		e.T.Fatal(err)
	}
	show, err = e.Slurm.Scontrol(e.Ctx, "show", "reservation", name, "-o")
	// A name slurmctld does not hold: "Reservation NAME not found" or "No
	// reservations in the system", on stdout or stderr, and exit status 1.
	if err != nil && !strings.Contains(err.Error()+show, "not found") && !strings.Contains(err.Error()+show, "No reservations") {
		e.T.Fatal(err)
	}
	if !strings.Contains(show, "ReservationName="+name) {
		show = ""
	}
	return r, ok, strings.TrimSpace(show)
}

// deleteNodeSetAtEnd deletes the NodeSet when the test ends, while its
// controller still runs, and strips the finalizer if it is still there
// after that: a NodeSet of this name left Terminating would otherwise be
// synced by the next run's controller (-count=N), against that run's Slurm.
func (e *env) deleteNodeSetAtEnd(name string) {
	e.T.Cleanup(func() {
		ctx := context.Background()
		nsets := e.VC.SlinkyV1beta1().NodeSets(e.NS)
		if err := nsets.Delete(ctx, name, metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
			return
		}
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if _, err := nsets.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return
			}
		}
		_, _ = nsets.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
}

// TestScheduledUpdate: with updateStrategy ScheduledUpdate the controller
// makes the Slurm reservation SlurmOperatorMaint-<nodeset> (MAINT,
// IGNORE_JOBS, user slurm, the NodeSet's nodes) that slurmctld holds, and
// holds the NodeSet with a finalizer while it exists; a template change
// replaces no pod while the window is ahead, and every outdated pod once
// Slurm holds the window open; deleting the NodeSet deletes the
// reservation, then the finalizer goes. Slurm 24.11's slurmrestd cannot
// write reservations: there SpecSupported=False says so, and no pod is
// replaced, as with OnDelete.
func TestScheduledUpdate(t *testing.T) {
	e := start(t, "sched", 2)
	const resv = "SlurmOperatorMaint-sched"
	ahead := time.Now().Add(time.Hour).Truncate(time.Second)
	e.NewNodeSet("sched", 2, scheduledStrategy(ahead))
	e.deleteNodeSetAtEnd("sched")
	e.Eventually("two ready pods", func() (bool, string) { n := e.MarkAllReady(); return n == 2, fmt.Sprint(n) })
	oldHash := e.Pods()["sched-0"].Labels[slinkyv1beta1.LabelRevisionHash]

	if e.Slurm.Name() == "slurm-24.11" {
		e.Eventually("SpecSupported=False naming the REST version", func() (bool, string) {
			c := e.condition("sched", "SpecSupported")
			return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "updateStrategy ScheduledUpdate") &&
				strings.Contains(c.Message, "v0.0.42") && strings.Contains(c.Message, "as with OnDelete"), fmt.Sprintf("%+v", c)
		})
		e.PatchNodeSet("sched", `{"spec":{"template":{"metadata":{"labels":{"team":"new"}}}}}`)
		e.waitObserved("sched", oldHash)
		for _, p := range e.Pods() {
			if p.Labels[slinkyv1beta1.LabelRevisionHash] != oldHash || p.Annotations[slinkyv1beta1.AnnotationPodCordon] != "" {
				t.Errorf("%s replaced or cordoned without a reservation", p.Name)
			}
		}
		if _, ok, show := e.reservation(resv); ok || show != "" {
			t.Errorf("a reservation was made: %s", show)
		}
		if f := e.Get("sched").Finalizers; len(f) != 0 {
			t.Errorf("finalizers %v", f)
		}
		return
	}

	// The window is an hour ahead: slurmctld holds it, inactive.
	e.Eventually("reservation held by slurmctld", func() (bool, string) {
		r, ok, show := e.reservation(resv)
		return ok && r.Start.Equal(ahead) && r.End.Equal(ahead.Add(10*time.Minute)) &&
			slices.Equal(r.Nodes, []string{"sched-0", "sched-1"}) && slices.Contains(r.Flags, "MAINT") &&
			slices.Contains(r.Flags, "IGNORE_JOBS") && slices.Equal(r.Users, []string{"slurm"}) &&
			strings.Contains(show, "State=INACTIVE"), fmt.Sprintf("%+v %q", r, show)
	})
	if f := e.Get("sched").Finalizers; !slices.Contains(f, slinkyv1beta1.FinalizerNodeSetReservation) {
		t.Fatalf("reservation held, finalizers %v", f)
	}
	if out, want := e.mustVC(append([]string{"nodeset", "describe", "sched"}, e.Slurm.ServeFlags(t)...)...),
		"ScheduledUpdate (from "+ahead.UTC().Format(time.RFC3339)+" for 10m, Slurm reservation "+resv+")"; !strings.Contains(out, want) {
		t.Errorf("describe lacks %q:\n%s", want, out)
	}

	// A template change while the window is ahead replaces nothing.
	e.PatchNodeSet("sched", `{"spec":{"template":{"metadata":{"labels":{"team":"new"}}}}}`)
	e.waitObserved("sched", oldHash)
	newHash := e.Get("sched").Status.NodeSetHash
	for _, p := range e.Pods() {
		if p.Labels[slinkyv1beta1.LabelRevisionHash] != oldHash || p.Annotations[slinkyv1beta1.AnnotationPodCordon] != "" {
			t.Fatalf("%s replaced or cordoned before the window", p.Name)
		}
	}
	if st := e.SlurmState("sched-0"); strings.Contains(st, "DRAIN") {
		t.Fatalf("sched-0 drained before the window: %s", st)
	}

	// The window moved to now: the reservation follows, slurmctld holds
	// it active, and the outdated pods are drained and replaced.
	now := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	e.PatchNodeSet("sched", fmt.Sprintf(`{"spec":{"updateStrategy":{"scheduledUpdate":{"startTime":%q}}}}`, now))
	e.Eventually("reservation active in slurmctld", func() (bool, string) {
		_, ok, show := e.reservation(resv)
		return ok && strings.Contains(show, "State=ACTIVE"), show
	})
	e.Eventually("pods replaced inside the window", func() (bool, string) {
		pods := e.Pods()
		updated := 0
		for _, p := range pods {
			if p.Labels[slinkyv1beta1.LabelRevisionHash] == newHash {
				updated++
			}
		}
		e.MarkAllReady()
		return updated == 2 && len(pods) == 2, fmt.Sprintf("%d updated: %s", updated, names(pods))
	})

	// Deleted: the reservation goes first, then the finalizer, then the
	// NodeSet; once the NodeSet is gone slurmctld holds no reservation.
	if err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Delete(e.Ctx, "sched", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Eventually("NodeSet gone", func() (bool, string) {
		ns, err := e.VC.SlinkyV1beta1().NodeSets(e.NS).Get(e.Ctx, "sched", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			t.Fatal(err)
		}
		return false, fmt.Sprintf("finalizers %v", ns.Finalizers)
	})
	if _, ok, show := e.reservation(resv); ok || show != "" {
		t.Fatalf("NodeSet gone, reservation still held: %s", show)
	}
}

// waitObserved waits until the NodeSet's status shows a sync of its
// current generation on a revision other than oldHash: the controller has
// decided on the new template.
func (e *env) waitObserved(name, oldHash string) {
	e.T.Helper()
	e.Eventually("new template observed", func() (bool, string) {
		ns := e.Get(name)
		return ns.Status.ObservedGeneration == ns.Generation && ns.Status.NodeSetHash != oldHash && ns.Status.NodeSetHash != "",
			fmt.Sprintf("%+v", ns.Status)
	})
}
