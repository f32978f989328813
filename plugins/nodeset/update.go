package nodeset

import (
	"context"
	"errors"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// rollingUpdate replaces pods not on the update revision, honouring
// maxUnavailable: unavailable pods first (replacing them costs nothing),
// then the highest ordinals. A replaced pod goes through the same
// cordon-drain-delete as a scale-in (retire, drain.go), so no job is killed
// by an update. It runs only when the NodeSet neither scales out nor in.
// At most burst pods are retired per sync.
func (s *nodeSetSync) rollingUpdate(ctx context.Context) (bool, error) {
	ns, now := s.set, s.now
	if s.sshHold {
		// A replaced pod would not come back (ssh.go).
		return false, nil
	}
	strategy := ns.Spec.UpdateStrategy.Type
	if strategy == slinkyv1beta1.ScheduledUpdateNodeSetStrategyType {
		// Inside the NodeSet's Slurm maintenance window only (scheduled.go).
		return s.scheduledUpdate(ctx)
	}
	if strategy != "" && strategy != slinkyv1beta1.RollingUpdateNodeSetStrategyType {
		// OnDelete: only pods that someone deletes come back on the new
		// revision.
		return false, nil
	}
	maxUnavailable := intstr.FromString("25%")
	if ru := ns.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		maxUnavailable = *ru.MaxUnavailable
	}
	budget, err := intstr.GetScaledValueFromIntOrPercent(&maxUnavailable, s.replicas, true)
	if err != nil {
		return false, err
	}
	budget = max(budget, 1)

	var outdated []*corev1.Pod
	var inProgress []*corev1.Pod
	for _, p := range s.active {
		if s.upToDate(p) {
			if !isAvailable(p, ns.Spec.MinReadySeconds, now) {
				budget--
			}
			continue
		}
		if st, ok := s.slurm.Node(slinkyv1beta1.SlurmNodeName(p)); isCordoned(p) && ok && st.Drain() && st.Reason == reasonUpdate {
			inProgress = append(inProgress, p)
			budget--
			continue
		}
		outdated = append(outdated, p)
	}
	wait := false
	var errs []error
	// At most burst pods retired per sync (as a scale-in): each costs
	// Slurm calls and API writes; the rest at the next sync.
	retired := 0
	capped := func() bool {
		if retired >= burst {
			wait = true
			return true
		}
		retired++
		return false
	}
	for _, p := range inProgress {
		if capped() {
			break
		}
		w, err := s.retire(ctx, p, reasonUpdate)
		if err != nil {
			errs = append(errs, err)
		}
		wait = wait || w
	}
	sort.SliceStable(outdated, func(i, j int) bool {
		ai, aj := isAvailable(outdated[i], ns.Spec.MinReadySeconds, now), isAvailable(outdated[j], ns.Spec.MinReadySeconds, now)
		if ai != aj {
			return !ai
		}
		return ordinalOf(ns, outdated[i]) > ordinalOf(ns, outdated[j])
	})
	for _, p := range outdated {
		if isAvailable(p, ns.Spec.MinReadySeconds, now) {
			if budget <= 0 {
				break
			}
			budget--
		}
		if capped() {
			break
		}
		w, err := s.retire(ctx, p, reasonUpdate)
		if err != nil {
			errs = append(errs, err)
		}
		wait = wait || w
	}
	return wait, errors.Join(errs...)
}
