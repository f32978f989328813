package nodeset

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// slurmConditionPrefix starts the pod condition types that carry the state
// of the pod's Slurm node, as Slinky's operator writes them: one True
// condition for the base state (SlurmNodeStateIdle, ...Allocated, ...) and
// one per state flag (SlurmNodeStateDrain, ...), the node's reason as
// message. Tools written for Slinky read them from the pod.
const slurmConditionPrefix = "SlurmNodeState"

var (
	slurmBaseConditions = map[string]string{
		"allocated": "Allocated", "down": "Down", "error": "Error", "future": "Future",
		"idle": "Idle", "mixed": "Mixed", "unknown": "Unknown", "completing": "Completing",
	}
	slurmFlagConditions = map[string]string{
		"COMPLETING": "Completing", "DRAIN": "Drain", "FAIL": "Fail", "INVALID": "Invalid",
		"INVALID_REG": "InvalidReg", "MAINTENANCE": "Maintenance", "NOT_RESPONDING": "NotResponding",
		"UNDRAIN": "Undrain",
	}
)

// slurmConditions are the Slurm conditions a pod should carry for its
// node's state; none for a node Slurm does not know.
func slurmConditions(st slurm.NodeState, known bool) map[corev1.PodConditionType]string {
	out := map[corev1.PodConditionType]string{}
	if !known {
		return out
	}
	if c, ok := slurmBaseConditions[st.Base]; ok {
		out[corev1.PodConditionType(slurmConditionPrefix+c)] = st.Reason
	}
	for _, f := range st.Flags {
		if c, ok := slurmFlagConditions[strings.ToUpper(f)]; ok {
			out[corev1.PodConditionType(slurmConditionPrefix+c)] = st.Reason
		}
	}
	return out
}

// syncPodStates writes the Slurm conditions of the NodeSet's pods (status
// subresource, strategic merge patch of the conditions that changed: the
// kubelet's own are untouched). It needs Slurm's states of this sync: the
// caller runs it only after a successful refresh.
func (s *nodeSetSync) syncPodStates(ctx context.Context) error {
	var errs []error
	now := metav1.Now()
	for _, p := range s.pods {
		if isTerminating(p) {
			continue
		}
		st, known := s.slurm.Node(slinkyv1beta1.SlurmNodeName(p))
		want := slurmConditions(st, known)
		var changes []any
		for _, c := range p.Status.Conditions {
			if _, ok := want[c.Type]; !ok && strings.HasPrefix(string(c.Type), slurmConditionPrefix) {
				changes = append(changes, map[string]any{"type": c.Type, "$patch": "delete"})
			}
		}
		for _, typ := range sortedKeys(want) {
			i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == typ })
			if i >= 0 && p.Status.Conditions[i].Status == corev1.ConditionTrue && p.Status.Conditions[i].Message == want[typ] {
				continue
			}
			since := now
			if i >= 0 && p.Status.Conditions[i].Status == corev1.ConditionTrue {
				since = p.Status.Conditions[i].LastTransitionTime
			}
			changes = append(changes, corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, Message: want[typ], LastTransitionTime: since})
		}
		if len(changes) == 0 {
			continue
		}
		patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": changes}})
		if err != nil {
			return err
		}
		_, err = s.c.podControl.PatchPod(ctx, p.Namespace, p.Name, types.StrategicMergePatchType, patch, "status")
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[corev1.PodConditionType]string) []corev1.PodConditionType {
	keys := make([]corev1.PodConditionType, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
