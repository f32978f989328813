package nodeset

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// CacheReads implements framework.Controller. NodeSets and revisions are
// read whole (a revision's data is the template). Of a pod the controller
// reads its node, phase, Ready condition and the Slurm conditions it
// writes, and of its own pods the annotations podAnnotations names; of a
// Node whether it is cordoned, its taints and the annotations
// nodeAnnotations names; of the Service and PodDisruptionBudget (besides their owner)
// the spec fields it sets, to put them right when they drifted. Pods are
// changed with patches and Services/PDBs created or server-side applied
// from scratch, so nothing dropped here is ever written back. Of the
// metadata, the annotations of Services and PDBs, and the labels and
// annotations of a ConfigMap that is no NodeSet's ssh config, are dropped:
// nothing reads them (owned.go selects those kinds already; this bounds
// what a tenant who copies serve's label onto its objects costs).
func (c *Controller) CacheReads() []framework.CacheRead {
	return []framework.CacheRead{
		framework.ReadsAll[slinkyv1beta1.NodeSet](),
		// Revisions are cached cluster-wide (every StatefulSet's and
		// DaemonSet's too): their data only where a NodeSet may read it.
		framework.ReadsOnly(keepRevision),
		// Slinky's Controller and RestApi: small, read to find slurmrestd.
		framework.ReadsAll[slinkyv1beta1.Controller](),
		framework.ReadsAll[slinkyv1beta1.RestApi](),
		framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *corev1.Pod) {
			dst.Spec.NodeName = src.Spec.NodeName
			// The Slurm node's name (slurmNodeName).
			dst.Spec.Hostname = src.Spec.Hostname
			dst.Spec.HostNetwork = src.Spec.HostNetwork
			dst.Status.Phase = src.Status.Phase
			framework.KeepPodConditions(dst, src, corev1.PodReady)
			// The node a DaemonSet-mode pod not yet scheduled is for.
			keepDaemonTarget(dst, src)
			// The Slurm conditions it writes (podstate.go), to write only
			// what changed.
			for _, c := range src.Status.Conditions {
				if strings.HasPrefix(string(c.Type), slurmConditionPrefix) && !slices.ContainsFunc(dst.Status.Conditions,
					func(d corev1.PodCondition) bool { return d.Type == c.Type }) {
					dst.Status.Conditions = append(dst.Status.Conditions, c)
				}
			}
		}), podAnnotationRead),
		framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *corev1.Node) {
			dst.Spec.Unschedulable = src.Spec.Unschedulable
			dst.Spec.Taints = src.Spec.Taints // pinToNode
			c.keepNodeReasons(dst, src)
			// Labels are kept with the metadata: DaemonSet mode matches them.
			keepHostnameOverride(dst, src)
		}), func(_ *corev1.Node, key string) bool { return nodeAnnotations[key] }),
		framework.ReadsOnly(func(dst, src *corev1.Service) {
			dst.Annotations = nil // never read
			dst.Spec.ClusterIP = src.Spec.ClusterIP
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.PublishNotReadyAddresses = src.Spec.PublishNotReadyAddresses
			dst.Spec.Ports = src.Spec.Ports
		}),
		// Whether a ConfigMap is immutable and the digest of its
		// sshd_config, never its data (ssh.go).
		framework.ReadsOnly(keepSSHConfig),
		framework.ReadsOnly(func(dst, src *policyv1.PodDisruptionBudget) {
			dst.Annotations = nil // never read
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.MinAvailable = src.Spec.MinAvailable
			dst.Spec.MaxUnavailable = src.Spec.MaxUnavailable
		}),
	}
}

// podAnnotations are the annotations of its pods the controller reads:
// cordons and their drain deadline, the deletion cost a scale-in weighs,
// and what it recorded of its node's topology and features.
var podAnnotations = map[string]bool{
	slinkyv1beta1.AnnotationPodCordon: true, slinkyv1beta1.AnnotationPodDeadline: true,
	slinkyv1beta1.AnnotationPodDeletionCost: true, annotationNodeCordon: true,
	slinkyv1beta1.AnnotationNodeTopologySpec: true, annotationSlurmTopology: true, annotationSlurmFeatures: true,
}

// podAnnotationRead tells whether the controller reads annotation key of
// pod src: one of podAnnotations, of a pod a NodeSet controls or may adopt
// (an orphan with the label of every NodeSet's selector, as keepRevision).
// Of every other pod it reads names, labels and owners, no annotation.
func podAnnotationRead(src *corev1.Pod, key string) bool {
	return podAnnotations[key] && nodeSetsOrAdoptable(&src.ObjectMeta)
}

// nodeAnnotations are the annotations of a Node the controller reads
// (drain.go, topology.go, features.go, daemonset.go); keepNodeReasons cuts
// them.
var nodeAnnotations = map[string]bool{
	slinkyv1beta1.AnnotationNodeCordonReason: true, slinkyv1beta1.AnnotationNodeTopologySpec: true,
	slinkyv1beta1.AnnotationNodeFeaturesSpec: true, slinkyv1beta1.AnnotationNodeHostnameOverride: true,
}

// nodeSetsOrAdoptable says whether an object is controlled by a NodeSet,
// or is an orphan with the label of every NodeSet's selector (which a
// NodeSet may adopt).
func nodeSetsOrAdoptable(m *metav1.ObjectMeta) bool {
	ref := metav1.GetControllerOfNoCopy(m)
	switch {
	case ref != nil && ref.Kind == slinkyv1beta1.NodeSetKind.Kind && strings.HasPrefix(ref.APIVersion, slinkyv1beta1.SchemeGroupVersion.Group+"/"):
		return true
	case ref == nil && m.Labels[slinkyv1beta1.LabelAppName] == slinkyv1beta1.AppName:
		return true
	}
	return false
}

// maxConditionTypeLen is the longest condition type Kubernetes allows
// (metav1.Condition's type).
const maxConditionTypeLen = 316

// maxKeptText bounds each string kept from a Node for a drain reason: the
// reason is cut to maxReasonRunes runes after its control characters are
// dropped, so a little more than that many runes' bytes is kept.
const maxKeptText = 4 * 4 * maxReasonRunes

// keepNodeReasons keeps of a Node what words a drain (drain.go): its
// node-cordon-reason annotation and the conditions of the types
// --propagated-node-conditions names, the first of each type, each text
// cut to maxKeptText bytes. A Node may hold any number of annotations and
// conditions of any length; the cache holds these few.
func (c *Controller) keepNodeReasons(dst, src *corev1.Node) {
	// dst's annotations may be one map shared by every cached Node that
	// has equal ones (framework.Interner): written to in place, one node's
	// cut values would show on the others, and the informer's write would
	// race with the workers' reads. A map of our own is made first.
	own := false
	put := func(k, v string) {
		if !own {
			dst.Annotations, own = maps.Clone(dst.Annotations), true
			if dst.Annotations == nil {
				dst.Annotations = map[string]string{}
			}
		}
		dst.Annotations[k] = v
	}
	if v, ok := src.Annotations[slinkyv1beta1.AnnotationNodeCordonReason]; ok {
		dst.Annotations, own = map[string]string{slinkyv1beta1.AnnotationNodeCordonReason: cutText(v)}, true
	}
	if v, ok := src.Annotations[slinkyv1beta1.AnnotationNodeFeaturesSpec]; ok {
		// One byte past the bound says "too long" (features.go).
		put(slinkyv1beta1.AnnotationNodeFeaturesSpec, v[:min(len(v), maxFeaturesBytes+1)])
	}
	if v, ok := src.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec]; ok {
		// One byte past the bound says "too long" (topology.go).
		put(slinkyv1beta1.AnnotationNodeTopologySpec, v[:min(len(v), maxTopologyBytes+1)])
	}
	for _, t := range c.propagatedConditions {
		for _, nc := range src.Status.Conditions {
			if string(nc.Type) == t {
				dst.Status.Conditions = append(dst.Status.Conditions, corev1.NodeCondition{
					Type: nc.Type, Status: nc.Status, Reason: cutText(nc.Reason), Message: cutText(nc.Message)})
				break
			}
		}
	}
}

// cutText cuts s to at most maxKeptText bytes, at a rune boundary.
func cutText(s string) string {
	if len(s) <= maxKeptText {
		return s
	}
	s = s[:maxKeptText]
	for len(s) > 0 && !utf8.RuneStart(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	// The last rune may be cut; the reason drops what does not decode.
	return s
}

// keepRevision keeps of a ControllerRevision its number, and its data
// where a NodeSet may read it: controlled by a NodeSet, or an orphan with
// the label of every NodeSet's selector (claimRevisions adopts those).
// Others are another controller's (a StatefulSet's template, of any
// size): their metadata is kept, for claimRevisions to pass them by.
func keepRevision(dst, src *appsv1.ControllerRevision) {
	dst.Revision = src.Revision
	if !nodeSetsOrAdoptable(&src.ObjectMeta) {
		dst.Annotations = nil
		return
	}
	dst.Data = src.Data
}

// keepDaemonTarget is for the pod cache (cache.go): of a pod's affinity it
// keeps only the node name daemonTarget reads, so that a pod not yet
// scheduled is known to be its node's.
func keepDaemonTarget(dst, src *corev1.Pod) {
	if src.Spec.NodeName != "" || dst.Spec.Affinity != nil {
		return
	}
	if name := daemonTarget(src); name != "" {
		requireNode(&dst.Spec, name)
	}
}

// keepHostnameOverride is for the node cache (cache.go): the
// hostname-override annotation names the node's Slurm node, whatever other
// annotations the cache drops.
func keepHostnameOverride(dst, src *corev1.Node) {
	v, ok := src.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride]
	if !ok || dst.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride] == v {
		return
	}
	// The map may be shared with other cached objects (the interner).
	dst.Annotations = maps.Clone(dst.Annotations)
	if dst.Annotations == nil {
		dst.Annotations = map[string]string{}
	}
	dst.Annotations[slinkyv1beta1.AnnotationNodeHostnameOverride] = v
}
