package nodeset

import (
	"context"
	"errors"
	"fmt"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// syncProtection keeps the pod-protect label in step with Slurm, as
// Slinky's operator does: "true" on the pods whose Slurm node runs jobs
// (allocated, mixed or completing, draining included) while workload
// disruption protection is on, absent on the others. The NodeSet's
// PodDisruptionBudget (maxUnavailable 0) selects the labelled pods, so a
// node drain (the Eviction API) cannot take a busy slurmd pod and kill its
// jobs, while idle ones stay evictable. It needs Slurm's states of this
// sync: the caller runs it only after a successful refresh.
func (s *nodeSetSync) syncProtection(ctx context.Context) error {
	on := protectionOn(s.set)
	var errs []error
	for _, p := range s.pods {
		if isTerminating(p) {
			continue
		}
		want := on && s.busy(p)
		if want == (p.Labels[slinkyv1beta1.LabelPodProtect] == "true") {
			continue
		}
		value := "null"
		if want {
			value = `"true"`
		}
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%s}}}`, slinkyv1beta1.LabelPodProtect, value)
		if err := s.patchPod(ctx, p, patch); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
