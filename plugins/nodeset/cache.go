package nodeset

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// CacheReads implements framework.Controller. NodeSets and revisions are
// read whole (a revision's data is the template). Of a pod the controller
// reads its node, phase, Ready condition and the Slurm conditions it
// writes; of a Node whether it is cordoned and its taints; of the Service and PodDisruptionBudget (besides their owner)
// the spec fields it sets, to put them right when they drifted. Pods are
// changed with patches and Services/PDBs created or server-side applied
// from scratch, so nothing dropped here is ever written back.
func (c *Controller) CacheReads() []framework.CacheRead {
	return []framework.CacheRead{
		framework.ReadsAll[slinkyv1beta1.NodeSet](),
		framework.ReadsAll[appsv1.ControllerRevision](),
		// Slinky's Controller and RestApi: small, read to find slurmrestd.
		framework.ReadsAll[slinkyv1beta1.Controller](),
		framework.ReadsAll[slinkyv1beta1.RestApi](),
		framework.ReadsOnly(func(dst, src *corev1.Pod) {
			dst.Spec.NodeName = src.Spec.NodeName
			dst.Status.Phase = src.Status.Phase
			framework.KeepPodConditions(dst, src, corev1.PodReady)
			// The Slurm conditions it writes (podstate.go), to write only
			// what changed.
			for _, c := range src.Status.Conditions {
				if strings.HasPrefix(string(c.Type), slurmConditionPrefix) && !slices.ContainsFunc(dst.Status.Conditions,
					func(d corev1.PodCondition) bool { return d.Type == c.Type }) {
					dst.Status.Conditions = append(dst.Status.Conditions, c)
				}
			}
		}),
		framework.ReadsOnly(func(dst, src *corev1.Node) {
			dst.Spec.Unschedulable = src.Spec.Unschedulable
			dst.Spec.Taints = src.Spec.Taints // pinToNode
		}),
		framework.ReadsOnly(func(dst, src *corev1.Service) {
			dst.Spec.ClusterIP = src.Spec.ClusterIP
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.PublishNotReadyAddresses = src.Spec.PublishNotReadyAddresses
			dst.Spec.Ports = src.Spec.Ports
		}),
		framework.ReadsOnly(func(dst, src *policyv1.PodDisruptionBudget) {
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.MinAvailable = src.Spec.MinAvailable
			dst.Spec.MaxUnavailable = src.Spec.MaxUnavailable
		}),
	}
}
