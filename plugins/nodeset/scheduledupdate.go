package nodeset

import (
	"context"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// scheduledUpdate is the update phase of a ScheduledUpdate NodeSet. Pods
// not on the update revision are replaced, each drained first as in a
// rolling update, while the NodeSet's reservation is active (as Slurm holds
// it, so a recurring window is followed) and their Slurm node is in it; all
// at once, since the window has taken those nodes out of service already.
// As with Slinky's operator, an outdated pod that is not ready is replaced
// whenever it is seen: it serves nothing. When the window closes on a pod
// whose drain has not finished, it is put back in service (uncordoned, its
// node resumed) and waits for the next window.
func (s *nodeSetSync) scheduledUpdate(ctx context.Context) (bool, error) {
	var outdated []*corev1.Pod
	for _, p := range s.active {
		if !s.upToDate(p) {
			outdated = append(outdated, p)
		}
	}
	if len(outdated) == 0 {
		return false, nil
	}
	var open *slurm.Reservation
	if rc, ok := s.slurm.(slurm.ReservationClient); ok && rc.ReservationsSupported(ctx) == nil {
		r, exists, err := rc.Reservation(ctx, reservationName(s.set))
		if err != nil {
			return false, err
		}
		if exists && r.Active(s.now) {
			open = &r
		}
	}
	wait := false
	var errs []error
	retired := 0 // at most burst per sync, as a rolling update
	for _, p := range outdated {
		node := slinkyv1beta1.SlurmNodeName(p)
		st, known := s.slurm.Node(node)
		inProgress := isCordoned(p) && known && st.Drain() && st.Reason == reasonUpdate
		switch {
		case !isReady(p) || open != nil && slices.Contains(open.Nodes, node):
			if retired >= burst {
				wait = true
				continue
			}
			retired++
			w, err := s.retire(ctx, p, reasonUpdate)
			if err != nil {
				errs = append(errs, err)
			}
			wait = wait || w
		case inProgress:
			// The window closed before the node drained.
			if err := s.setCordon(ctx, p, false); err != nil {
				errs = append(errs, err)
			} else if err := s.undrain(ctx, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return wait, errors.Join(errs...)
}
