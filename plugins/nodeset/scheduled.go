package nodeset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm/slinky"
)

// updateStrategy ScheduledUpdate: template changes reach the pods only
// inside a maintenance window, which is a Slurm reservation with the MAINT
// flag over the NodeSet's nodes, as Slinky's operator makes it. Slurm then
// starts no job on those nodes during the window (IGNORE_JOBS lets it be
// made over nodes that run jobs; those jobs go on), so replacing their pods
// then costs no work that the window did not already stop.

// reservationPrefix names the reservation as Slinky's operator names it,
// so that a NodeSet handed over between the two keeps its reservation.
const reservationPrefix = slinkyv1beta1.ReservationPrefix

// reservationUser is the one user the reservation admits, as the
// operator's: the Slurm user, who runs no jobs.
const reservationUser = "slurm"

// requiredReservationFlags are on every maintenance reservation: MAINT
// marks the nodes as in maintenance, IGNORE_JOBS lets the reservation be
// made over nodes that run jobs.
var requiredReservationFlags = []string{"IGNORE_JOBS", "MAINT"}

// recurringFlags make a reservation repeat; Slurm then moves its start
// forward after each occurrence.
var recurringFlags = []string{"HOURLY", "DAILY", "WEEKLY", "WEEKDAY", "WEEKEND"}

// defaultWindow is the schema's default duration.
const defaultWindow = 30 * time.Minute

func reservationName(ns *slinkyv1beta1.NodeSet) string { return reservationPrefix + ns.Name }

// window is a ScheduledUpdate as the spec states it.
type window struct {
	start, end time.Time
	flags      []string
	recurring  bool
}

// windowOf reads the NodeSet's ScheduledUpdate: a start, a duration (Go's
// syntax, "30m" when empty) and extra flags, upper case.
func windowOf(ns *slinkyv1beta1.NodeSet) (window, error) {
	su := ns.Spec.UpdateStrategy.ScheduledUpdate
	if su == nil || su.StartTime == nil || su.StartTime.IsZero() {
		return window{}, errors.New("scheduledUpdate.startTime is not set")
	}
	d := defaultWindow
	if su.Duration != "" {
		var err error
		if d, err = time.ParseDuration(su.Duration); err != nil {
			return window{}, fmt.Errorf("scheduledUpdate.duration %q is not a duration (e.g. 30m, 2h)", su.Duration)
		}
		if d <= 0 {
			return window{}, fmt.Errorf("scheduledUpdate.duration %q is not positive", su.Duration)
		}
	}
	flags := slices.Clone(requiredReservationFlags)
	for _, f := range su.Flags {
		if f = strings.ToUpper(strings.TrimSpace(f)); f != "" {
			flags = append(flags, f)
		}
	}
	slices.Sort(flags)
	flags = slices.Compact(flags)
	w := window{start: su.StartTime.Time, end: su.StartTime.Add(d), flags: flags}
	w.recurring = slices.ContainsFunc(flags, func(f string) bool { return slices.Contains(recurringFlags, f) })
	return w, nil
}

// reservationStep is what planReservation decides.
type reservationStep int

const (
	resvNothing reservationStep = iota
	// resvCreate: make the reservation.
	resvCreate
	// resvNodes: an open window's nodes changed (scale out or in): Slurm
	// lets only them be changed while it is active.
	resvNodes
	// resvUpdate: a window not yet open changed its time or nodes.
	resvUpdate
	// resvRecreate: a window not yet open changed its flags or users,
	// which an update cannot take away: delete it and make it again.
	resvRecreate
	// resvDelete: a window not yet open, moved to one that has passed.
	resvDelete
)

// planReservation decides what to do with the reservation Slurm holds
// (held, nil when none) for the window w over nodes, at now. want is the
// reservation to create or update to.
//
// A reservation is made while the window has not ended: a start in the
// past becomes now (Slurm refuses starts more than a few minutes past),
// the end stays. Once Slurm has removed a one-off reservation at its end,
// it is not made again. An open window is left as it is but for its nodes.
func planReservation(name string, w window, held *slurm.Reservation, nodes []string, now time.Time) (reservationStep, slurm.Reservation) {
	want := slurm.Reservation{Name: name, Start: w.start, End: w.end, Nodes: nodes, Flags: w.flags, Users: []string{reservationUser}}
	if want.Start.Before(now) {
		want.Start = now.Truncate(time.Second)
	}
	if held == nil {
		if !now.Before(w.end) || len(nodes) == 0 {
			return resvNothing, want
		}
		return resvCreate, want
	}
	sameNodes := slices.Equal(held.Nodes, nodes)
	if held.Active(now) {
		if sameNodes || len(nodes) == 0 {
			return resvNothing, want
		}
		return resvNodes, slurm.Reservation{Name: name, Nodes: nodes}
	}
	// Slurm adds flags of its own (SPEC_NODES): those asked for must be
	// there, others may.
	flagsHeld := !slices.ContainsFunc(w.flags, func(f string) bool { return !slices.Contains(held.Flags, f) })
	if !flagsHeld || !slices.Equal(held.Users, want.Users) {
		if !now.Before(w.end) || len(nodes) == 0 {
			return resvDelete, want
		}
		return resvRecreate, want
	}
	if sameWindow(w, *held) && (sameNodes || len(nodes) == 0) {
		return resvNothing, want
	}
	if !now.Before(w.end) && !w.recurring {
		return resvDelete, want
	}
	if len(nodes) == 0 {
		want.Nodes = nil
	}
	if w.recurring && held.Start.After(w.start) {
		// Slurm's next occurrence: keep its time, change the nodes only.
		return resvUpdate, slurm.Reservation{Name: name, Nodes: want.Nodes}
	}
	return resvUpdate, want
}

// sameWindow says whether Slurm holds the window the spec states. Slurm
// counts minutes (a part of one is rounded up); a start that was in the
// past when the reservation was made is the time it was made; a
// recurring reservation's start moves on after each occurrence.
func sameWindow(w window, held slurm.Reservation) bool {
	if w.recurring && held.Start.After(w.start) {
		return true
	}
	endOK := !held.End.Before(w.end) && held.End.Before(w.end.Add(time.Minute))
	startOK := held.Start.Equal(w.start) || held.Start.After(w.start) && held.Start.Before(w.end)
	return endOK && startOK
}

// reservationNodes are the Slurm nodes of the NodeSet's pods that Slurm
// knows, sorted: a reservation over a node Slurm does not know is refused.
func (s *nodeSetSync) reservationNodes() []string {
	var out []string
	for _, p := range s.pods {
		if isTerminating(p) {
			continue
		}
		if n := slinkyv1beta1.SlurmNodeName(p); n != "" {
			if _, ok := s.slurm.Node(n); ok {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func hasReservationFinalizer(ns *slinkyv1beta1.NodeSet) bool {
	return slices.Contains(ns.Finalizers, slinkyv1beta1.FinalizerNodeSetReservation)
}

// setReservationFinalizer adds or removes the finalizer with a merge patch
// that carries the NodeSet's resourceVersion: the list is replaced whole,
// so a finalizer someone else added meanwhile makes it fail (and the sync
// retry) rather than be lost.
func (s *nodeSetSync) setReservationFinalizer(ctx context.Context, on bool) error {
	ns := s.set
	if hasReservationFinalizer(ns) == on {
		return nil
	}
	fins := slices.DeleteFunc(slices.Clone(ns.Finalizers), func(f string) bool { return f == slinkyv1beta1.FinalizerNodeSetReservation })
	if on {
		fins = append(fins, slinkyv1beta1.FinalizerNodeSetReservation)
	}
	if fins == nil {
		fins = []string{}
	}
	patch := map[string]any{"metadata": map[string]any{"resourceVersion": ns.ResourceVersion, "finalizers": fins}}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	got, err := s.c.vc.SlinkyV1beta1().NodeSets(ns.Namespace).Patch(ctx, ns.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("finalizer %s of NodeSet %s: %w", slinkyv1beta1.FinalizerNodeSetReservation, ns.Name, err)
	}
	// Later writes of this sync (status) go with the new version.
	s.set.Finalizers, s.set.ResourceVersion = got.Finalizers, got.ResourceVersion
	return nil
}

// scheduledUpdateNote is what spec.go's SpecSupported says of a
// ScheduledUpdate this controller cannot carry out, or "".
func (s *nodeSetSync) scheduledUpdateNote(ctx context.Context) string {
	if s.set.Spec.UpdateStrategy.Type != slinkyv1beta1.ScheduledUpdateNodeSetStrategyType {
		return ""
	}
	const asOnDelete = ": no reservation is made and pods are replaced only when deleted, as with OnDelete"
	if _, err := windowOf(s.set); err != nil {
		return "updateStrategy ScheduledUpdate: " + err.Error() + asOnDelete
	}
	if s.slurm == nil || s.slurmErr != nil {
		// Slurm was not reached this sync: what was said of it last time
		// stands (SpecSupported does not flap with Slurm's reachability).
		if c := meta.FindStatusCondition(s.set.Status.Conditions, conditions.SpecSupported); c != nil && c.Status == metav1.ConditionFalse {
			for n := range strings.SplitSeq(c.Message, "; ") {
				if strings.HasPrefix(n, "updateStrategy ScheduledUpdate") {
					return n
				}
			}
		}
		return ""
	}
	rc, ok := s.slurm.(slurm.ReservationClient)
	if !ok {
		return "updateStrategy ScheduledUpdate needs Slurm reservations, which this Slurm client does not make" + asOnDelete
	}
	if err := rc.ReservationsSupported(ctx); err != nil {
		if errors.Is(err, slurm.ErrReservationsUnsupported) {
			return "updateStrategy ScheduledUpdate needs a Slurm reservation: " + err.Error() + asOnDelete
		}
	}
	return ""
}

// syncReservation keeps the NodeSet's maintenance reservation, and the
// finalizer that holds the NodeSet while Slurm holds it, as Slinky's
// operator does: made (finalizer first) while the strategy is
// ScheduledUpdate and the NodeSet has replicas and Slurm nodes; deleted,
// then the finalizer removed, when the strategy changes, replicas go to
// zero or the NodeSet is deleted. Once Slurm has removed a one-off
// reservation at its end, the finalizer goes too. A NodeSet that never
// asked for a ScheduledUpdate costs no Slurm request here. refuse: the
// spec is refused (spec.go), and no reservation is made for it.
func (s *nodeSetSync) syncReservation(ctx context.Context, refuse bool) error {
	ns := s.set
	replicas := int32(1)
	if ns.Spec.Replicas != nil {
		replicas = *ns.Spec.Replicas
	}
	scheduled := ns.Spec.UpdateStrategy.Type == slinkyv1beta1.ScheduledUpdateNodeSetStrategyType &&
		ns.DeletionTimestamp == nil && replicas > 0 && !refuse
	held := hasReservationFinalizer(ns)
	if !scheduled && !held {
		return nil
	}
	name := reservationName(ns)
	if s.slurmErr != nil {
		var m *slinky.Missing
		if !scheduled && errors.As(s.slurmErr, &m) {
			// The NodeSet's Slurm is gone (its Controller, its
			// slurmrestd): there is nothing to delete the reservation in,
			// and the NodeSet must not be held for ever.
			s.c.recorder.Eventf(ns, corev1.EventTypeWarning, "ReservationNotDeleted",
				"Slurm cannot be reached (%v): reservation %s, if Slurm still holds it, is left; finalizer removed", s.slurmErr, name)
			return s.setReservationFinalizer(ctx, false)
		}
		return nil // the sync already fails for it, and is retried
	}
	rc, ok := s.slurm.(slurm.ReservationClient)
	if ok {
		if err := rc.ReservationsSupported(ctx); err != nil {
			if !errors.Is(err, slurm.ErrReservationsUnsupported) {
				return err
			}
			ok = false
		}
	}
	if !ok {
		// Nothing can have been made here (SpecSupported says why); a
		// finalizer another controller left cannot be honoured.
		return s.setReservationFinalizer(ctx, false)
	}
	cur, exists, err := rc.Reservation(ctx, name)
	if err != nil {
		return err
	}
	if !scheduled {
		if exists {
			if err := rc.DeleteReservation(ctx, name); err != nil {
				return err
			}
			s.c.recorder.Eventf(ns, corev1.EventTypeNormal, "ReservationDeleted", "Slurm reservation %s deleted", name)
		}
		return s.setReservationFinalizer(ctx, false)
	}
	w, err := windowOf(ns)
	if err != nil {
		return nil // SpecSupported says why
	}
	var curp *slurm.Reservation
	if exists {
		curp = &cur
	}
	step, want := planReservation(name, w, curp, s.reservationNodes(), time.Now())
	if (exists && step != resvDelete) || step == resvCreate {
		// Before the reservation exists: the NodeSet must not go without
		// it being deleted.
		if err := s.setReservationFinalizer(ctx, true); err != nil {
			return err
		}
	}
	switch step {
	case resvCreate:
		err = rc.CreateReservation(ctx, want)
	case resvNodes, resvUpdate:
		err = rc.UpdateReservation(ctx, want)
	case resvRecreate:
		if err = rc.DeleteReservation(ctx, name); err == nil {
			err = rc.CreateReservation(ctx, want)
		}
	case resvDelete:
		err = rc.DeleteReservation(ctx, name)
	default:
		if !exists {
			// Slurm removed it at its end (or someone deleted it), and
			// none is to be made: nothing holds the NodeSet any more.
			return s.setReservationFinalizer(ctx, false)
		}
		return nil
	}
	if err != nil {
		s.c.recorder.Eventf(ns, corev1.EventTypeWarning, "ReservationFailed", "Slurm reservation %s: %v", name, err)
		return fmt.Errorf("slurm reservation %s: %w", name, err)
	}
	if step == resvDelete {
		return s.setReservationFinalizer(ctx, false)
	}
	if step == resvCreate || step == resvRecreate {
		s.c.recorder.Eventf(ns, corev1.EventTypeNormal, "ReservationCreated", "Slurm reservation %s (flags %s) from %s to %s over %s",
			name, strings.Join(want.Flags, ","), want.Start.UTC().Format(time.RFC3339), want.End.UTC().Format(time.RFC3339), strings.Join(want.Nodes, ","))
	}
	return nil
}
