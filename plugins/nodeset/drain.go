package nodeset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// Slurm drain reasons written by this controller. The reason is the record
// of *why* a node was drained: the controller only resumes nodes whose
// reason it wrote, never an administrator's drain.
const (
	reasonPrefix   = "kubectl-vc: "
	reasonScaleIn  = reasonPrefix + "scale-in"
	reasonUpdate   = reasonPrefix + "update"
	reasonCordoned = reasonPrefix + "pod cordoned"
)

// reasonSlinky prefixes the drain reasons of Slinky's operator: a NodeSet
// taken over from it may have nodes it drained, which are resumed as ours.
const reasonSlinky = "slurm-operator:"

// annotationNodeCordon names, on a pod, the Kubernetes node for whose
// cordon this controller cordoned the pod. It is what tells that cordon
// from one set by hand (nodeset cordon) when the node is uncordoned, even
// if a Slurm administrator has since drained the node for a reason of
// their own.
const annotationNodeCordon = "kubectl-vc.io/cordoned-for-node"

func reasonNodeCordoned(node string) string {
	return reasonPrefix + "kubernetes node " + node + " cordoned"
}

// maxReasonRunes bounds the part of a drain reason taken from a Kubernetes
// node (its cordon-reason annotation, its conditions), as Slinky's
// operator bounds it.
const maxReasonRunes = 256

// nodeCordonReason is the Slurm drain reason of the pods of a cordoned
// Kubernetes node, as Slinky's operator words it: the node's
// nodeset.slinky.slurm.net/node-cordon-reason annotation; else, of the
// condition types --propagated-node-conditions names, those True on the
// node, each "(reason: message)", joined by "; "; else the controller's
// own. Whatever comes from the node is made one line of printable
// characters and bounded.
func (c *Controller) nodeCordonReason(node *corev1.Node) string {
	if v, ok := node.Annotations[slinkyv1beta1.AnnotationNodeCordonReason]; ok {
		if r := sanitizeReason(v); r != "" {
			return reasonPrefix + r
		}
	}
	var parts []string
	for _, t := range c.propagatedConditions {
		for _, nc := range node.Status.Conditions {
			if string(nc.Type) == t && nc.Status == corev1.ConditionTrue {
				parts = append(parts, "("+nc.Reason+": "+nc.Message+")")
				break
			}
		}
	}
	if r := sanitizeReason(strings.Join(parts, "; ")); r != "" {
		return reasonPrefix + r
	}
	return reasonNodeCordoned(node.Name)
}

// sanitizeReason makes text from a Kubernetes object a Slurm reason: tabs
// and line ends become spaces, other control characters go, and at most
// maxReasonRunes runes are kept, trimmed.
func sanitizeReason(v string) string {
	v = strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return ' '
		case unicode.IsControl(r) || r == utf8.RuneError:
			return -1
		}
		return r
	}, v)
	v = strings.TrimSpace(v)
	if utf8.RuneCountInString(v) > maxReasonRunes {
		v = strings.TrimSpace(string([]rune(v)[:maxReasonRunes]))
	}
	return v
}

// nodeCordonDrain says whether a Slurm reason is a drain this controller
// (or Slinky's operator) set for a Kubernetes node cordon: one of ours that
// no scale-in, update or pod cordon wrote.
func nodeCordonDrain(reason string) bool {
	return ourReason(reason) && reason != reasonScaleIn && reason != reasonUpdate && reason != reasonCordoned
}

// ourReason says whether a Slurm drain reason was written by a controller
// (this one, or Slinky's operator), i.e. may be undone by this one. An
// administrator's reason is anything else.
func ourReason(reason string) bool {
	return strings.HasPrefix(reason, reasonPrefix) || strings.HasPrefix(reason, reasonSlinky)
}

// syncNodeCordons is the first pod phase: Kubernetes node cordon ⇒ pod
// cordon ⇒ Slurm drain, and back. It records in s.nodeCordoned the pods
// cordoned for their node.
//
// The states of one pod, by its Kubernetes node:
//   - node cordoned: the pod is cordoned, marked as cordoned for that node,
//     and its Slurm node drained for it, unless it already is drained (for
//     any reason: an administrator's drain and reason are kept);
//   - node schedulable, pod marked as cordoned for a node: the pod is
//     uncordoned and its Slurm node resumed if the drain was for the node
//     cordon; a drain an administrator set, before or since, stays until
//     they resume it, and nothing drains the node again after that;
//   - otherwise the pod's own cordon rules (syncCordonsAndDrain).
func (s *nodeSetSync) syncNodeCordons(ctx context.Context) {
	c := s.c
	s.nodeCordoned = map[string]bool{}
	for i, p := range s.active {
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := c.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		st, known := s.slurm.Node(slinkyv1beta1.SlurmNodeName(p))
		forNode := p.Annotations[annotationNodeCordon] != "" ||
			// Cordoned by an earlier version, which did not mark it.
			isCordoned(p) && known && st.Drain() && st.Reason == reasonNodeCordoned(node.Name)
		switch {
		case node.Spec.Unschedulable:
			s.nodeCordoned[p.Name] = true
			if !isCordoned(p) || p.Annotations[annotationNodeCordon] != node.Name {
				patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true",%q:%q}}}`,
					slinkyv1beta1.AnnotationPodCordon, annotationNodeCordon, node.Name)
				if err := s.patchPod(ctx, p, patch); err != nil {
					s.errs = append(s.errs, err)
					continue
				}
				if !isCordoned(p) {
					c.recorder.Eventf(p, corev1.EventTypeNormal, "Cordoned", "Kubernetes node %s is cordoned", node.Name)
				}
			}
			if err := s.drain(ctx, p, c.nodeCordonReason(node)); err != nil {
				s.errs = append(s.errs, err)
			}
		case forNode:
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null,%q:null,%q:null}}}`,
				slinkyv1beta1.AnnotationPodCordon, slinkyv1beta1.AnnotationPodDeadline, annotationNodeCordon)
			if err := s.patchPod(ctx, p, patch); err != nil {
				s.errs = append(s.errs, err)
				continue
			}
			if known && st.Drain() && nodeCordonDrain(st.Reason) {
				if err := s.undrain(ctx, p); err != nil {
					s.errs = append(s.errs, err)
				}
			}
			q := p.DeepCopy()
			q.Annotations = withoutCordon(q.Annotations)
			s.active[i] = q
			c.recorder.Eventf(p, corev1.EventTypeNormal, "Uncordoned", "Kubernetes node %s is schedulable again", node.Name)
		}
	}
}

// patchPod applies a JSON merge patch to the pod; a pod gone is no error.
func (s *nodeSetSync) patchPod(ctx context.Context, pod *corev1.Pod, patch []byte) error {
	_, err := s.c.podControl.PatchPod(ctx, pod.Namespace, pod.Name, types.MergePatchType, patch)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// annotateActive sets (value non-nil) or removes (nil) the annotation key
// of s.active[i] with a merge patch, and puts the patched copy in its
// place so that later phases of the sync see it; the cached pod is not
// touched.
func (s *nodeSetSync) annotateActive(ctx context.Context, i int, key string, value *string) error {
	p := s.active[i]
	v := "null"
	if value != nil {
		v = fmt.Sprintf("%q", *value)
	}
	if err := s.patchPod(ctx, p, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%s}}}`, key, v)); err != nil {
		return err
	}
	q := p.DeepCopy()
	if q.Annotations == nil {
		q.Annotations = map[string]string{}
	}
	if value != nil {
		q.Annotations[key] = *value
	} else {
		delete(q.Annotations, key)
	}
	s.active[i] = q
	return nil
}

// syncCordonsAndDrain runs after the scale-in: cordon annotations set by
// hand (nodeset cordon) drain the node; a removed annotation resumes a node
// we drained (also after a scale-in was called off by scaling back up).
func (s *nodeSetSync) syncCordonsAndDrain(ctx context.Context) {
	for _, p := range s.active {
		if s.condemned[p.Name] || s.nodeCordoned[p.Name] {
			continue
		}
		st, known := s.slurm.Node(slinkyv1beta1.SlurmNodeName(p))
		switch {
		case isCordoned(p) && known && (st.Reason == reasonScaleIn ||
			st.Reason == reasonUpdate && s.upToDate(p)):
			// Scale-in called off, or an update reverted before this pod
			// was replaced: it is wanted as it is.
			if err := s.setCordon(ctx, p, false); err != nil {
				s.errs = append(s.errs, err)
			} else if err := s.undrain(ctx, p); err != nil {
				s.errs = append(s.errs, err)
			}
		case isCordoned(p):
			if st.Reason == reasonUpdate {
				continue // the update (update.go) carries on
			}
			if err := s.drain(ctx, p, reasonCordoned); err != nil {
				s.errs = append(s.errs, err)
			}
			if known && st.Busy() {
				s.setDeadline(ctx, p)
			}
		case known && st.Drain():
			if err := s.undrain(ctx, p); err != nil {
				s.errs = append(s.errs, err)
			}
		}
	}
}

// setCordon sets the pod's cordon annotation, or removes it together with
// the drain deadline and the node-cordon mark.
func (s *nodeSetSync) setCordon(ctx context.Context, pod *corev1.Pod, cordon bool) error {
	if cordon {
		return s.patchPod(ctx, pod, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, slinkyv1beta1.AnnotationPodCordon))
	}
	return s.patchPod(ctx, pod, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null,%q:null,%q:null}}}`,
		slinkyv1beta1.AnnotationPodCordon, slinkyv1beta1.AnnotationPodDeadline, annotationNodeCordon))
}

// drain drains the pod's Slurm node unless it already is; a node Slurm does
// not know (slurmd never registered) needs nothing.
func (s *nodeSetSync) drain(ctx context.Context, pod *corev1.Pod, reason string) error {
	if st, ok := s.slurm.Node(slinkyv1beta1.SlurmNodeName(pod)); ok && st.Drain() {
		return nil
	}
	err := s.slurm.Drain(ctx, slinkyv1beta1.SlurmNodeName(pod), reason)
	if errors.Is(err, slurm.ErrNodeNotFound) {
		return nil
	}
	return err
}

// undrain resumes the pod's Slurm node if this controller drained it.
func (s *nodeSetSync) undrain(ctx context.Context, pod *corev1.Pod) error {
	st, ok := s.slurm.Node(slinkyv1beta1.SlurmNodeName(pod))
	if !ok || !st.Drain() || !ourReason(st.Reason) {
		return nil
	}
	err := s.slurm.Undrain(ctx, slinkyv1beta1.SlurmNodeName(pod))
	if errors.Is(err, slurm.ErrNodeNotFound) {
		return nil
	}
	return err
}

// retire moves a leaving pod one step: cordon, drain, and delete once Slurm
// reports the node drained. It returns true while the pod must be waited for.
// Scale-in runs it for several pods at once (see parallel): it only reads
// the sync's shared fields, never writes them.
func (s *nodeSetSync) retire(ctx context.Context, pod *corev1.Pod, reason string) (bool, error) {
	if !isCordoned(pod) {
		if err := s.setCordon(ctx, pod, true); err != nil {
			return false, err
		}
	}
	if err := s.drain(ctx, pod, reason); err != nil {
		return false, err
	}
	drained, err := s.slurm.IsDrained(ctx, slinkyv1beta1.SlurmNodeName(pod))
	if err != nil {
		return false, err
	}
	if !drained {
		s.setDeadline(ctx, pod)
		return true, nil
	}
	if reason == reasonScaleIn {
		// persistentVolumeClaimRetentionPolicy whenScaled Delete (storage.go).
		if err := s.ownClaimsByPod(ctx, pod); err != nil {
			return false, err
		}
	}
	s.c.recorder.Eventf(pod, corev1.EventTypeNormal, "SlurmNodeDrained", "Slurm node %s drained (%s); deleting pod", slinkyv1beta1.SlurmNodeName(pod), reason)
	return false, s.deletePodExpected(ctx, pod)
}

// setDeadline records when the node's last job will end, so that users (and
// describe) see how long a drain may take.
func (s *nodeSetSync) setDeadline(ctx context.Context, pod *corev1.Pod) {
	t, err := s.slurm.JobEndDeadline(ctx, slinkyv1beta1.SlurmNodeName(pod))
	if err != nil || t.IsZero() {
		return
	}
	v := t.UTC().Format(time.RFC3339)
	if pod.Annotations[slinkyv1beta1.AnnotationPodDeadline] == v {
		return
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, slinkyv1beta1.AnnotationPodDeadline, v)
	_, _ = s.c.podControl.PatchPod(ctx, pod.Namespace, pod.Name, types.MergePatchType, patch)
}

func withoutCordon(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if k != slinkyv1beta1.AnnotationPodCordon && k != slinkyv1beta1.AnnotationPodDeadline && k != annotationNodeCordon {
			out[k] = v
		}
	}
	return out
}

// busy reports whether the pod's Slurm node runs jobs.
func (s *nodeSetSync) busy(p *corev1.Pod) bool {
	st, ok := s.slurm.Node(slinkyv1beta1.SlurmNodeName(p))
	return ok && st.Busy()
}
