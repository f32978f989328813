package nodeset

import (
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func reasonNodeCordoned(node string) string {
	return reasonPrefix + "kubernetes node " + node + " cordoned"
}

// syncNodeCordons is the first pod phase: Kubernetes node cordon ⇒ pod
// cordon ⇒ Slurm drain, and back. It records in s.nodeCordoned the pods
// cordoned for their node.
func (s *nodeSetSync) syncNodeCordons() {
	c := s.c
	s.nodeCordoned = map[string]bool{}
	for _, p := range s.active {
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := c.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		st, known := c.cfg.Slurm.Node(p.Name)
		switch {
		case node.Spec.Unschedulable:
			s.nodeCordoned[p.Name] = true
			if !isCordoned(p) {
				if err := s.setCordon(p, true); err != nil {
					s.errs = append(s.errs, err)
					continue
				}
				c.recorder.Eventf(p, corev1.EventTypeNormal, "Cordoned", "Kubernetes node %s is cordoned", node.Name)
			}
			if err := s.drain(p, reasonNodeCordoned(node.Name)); err != nil {
				s.errs = append(s.errs, err)
			}
		case isCordoned(p) && known && st.Drain() && st.Reason == reasonNodeCordoned(node.Name):
			if err := s.setCordon(p, false); err != nil {
				s.errs = append(s.errs, err)
				continue
			}
			if err := s.undrain(p); err != nil {
				s.errs = append(s.errs, err)
			}
			delete(s.nodeCordoned, p.Name)
			p.Annotations = withoutCordon(p.Annotations)
			c.recorder.Eventf(p, corev1.EventTypeNormal, "Uncordoned", "Kubernetes node %s is schedulable again", node.Name)
		}
	}
}

// syncCordonsAndDrain runs after the scale-in: cordon annotations set by
// hand (nodeset cordon) drain the node; a removed annotation resumes a node
// we drained (also after a scale-in was called off by scaling back up).
func (s *nodeSetSync) syncCordonsAndDrain() {
	for _, p := range s.active {
		if s.condemned[p.Name] || s.nodeCordoned[p.Name] {
			continue
		}
		st, known := s.c.cfg.Slurm.Node(p.Name)
		switch {
		case isCordoned(p) && known && (st.Reason == reasonScaleIn ||
			st.Reason == reasonUpdate && s.upToDate(p)):
			// Scale-in called off, or an update reverted before this pod
			// was replaced: it is wanted as it is.
			if err := s.setCordon(p, false); err != nil {
				s.errs = append(s.errs, err)
			} else if err := s.undrain(p); err != nil {
				s.errs = append(s.errs, err)
			}
		case isCordoned(p):
			if st.Reason == reasonUpdate {
				continue // the update (update.go) carries on
			}
			if err := s.drain(p, reasonCordoned); err != nil {
				s.errs = append(s.errs, err)
			}
			if known && st.Busy() {
				s.setDeadline(p)
			}
		case known && st.Drain():
			if err := s.undrain(p); err != nil {
				s.errs = append(s.errs, err)
			}
		}
	}
}

// setCordon sets the pod's cordon annotation, or removes it together with
// the drain deadline.
func (s *nodeSetSync) setCordon(pod *corev1.Pod, cordon bool) error {
	var patch []byte
	if cordon {
		patch = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, slinkyv1beta1.AnnotationPodCordon)
	} else {
		patch = fmt.Appendf(nil, `{"metadata":{"annotations":{%q:null,%q:null}}}`,
			slinkyv1beta1.AnnotationPodCordon, slinkyv1beta1.AnnotationPodDeadline)
	}
	_, err := s.c.kube.CoreV1().Pods(pod.Namespace).Patch(s.ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// drain drains the pod's Slurm node unless it already is; a node Slurm does
// not know (slurmd never registered) needs nothing.
func (s *nodeSetSync) drain(pod *corev1.Pod, reason string) error {
	if st, ok := s.c.cfg.Slurm.Node(pod.Name); ok && st.Drain() {
		return nil
	}
	err := s.c.cfg.Slurm.Drain(s.ctx, pod.Name, reason)
	if errors.Is(err, slurm.ErrNodeNotFound) {
		return nil
	}
	return err
}

// undrain resumes the pod's Slurm node if this controller drained it.
func (s *nodeSetSync) undrain(pod *corev1.Pod) error {
	st, ok := s.c.cfg.Slurm.Node(pod.Name)
	if !ok || !st.Drain() || !strings.HasPrefix(st.Reason, reasonPrefix) {
		return nil
	}
	err := s.c.cfg.Slurm.Undrain(s.ctx, pod.Name)
	if errors.Is(err, slurm.ErrNodeNotFound) {
		return nil
	}
	return err
}

// retire moves a leaving pod one step: cordon, drain, and delete once Slurm
// reports the node drained. It returns true while the pod must be waited for.
// Scale-in runs it for several pods at once (see parallel): it only reads
// the sync's shared fields, never writes them.
func (s *nodeSetSync) retire(pod *corev1.Pod, reason string) (bool, error) {
	if !isCordoned(pod) {
		if err := s.setCordon(pod, true); err != nil {
			return false, err
		}
	}
	if err := s.drain(pod, reason); err != nil {
		return false, err
	}
	drained, err := s.c.cfg.Slurm.IsDrained(s.ctx, pod.Name)
	if err != nil {
		return false, err
	}
	if !drained {
		s.setDeadline(pod)
		return true, nil
	}
	s.c.recorder.Eventf(pod, corev1.EventTypeNormal, "SlurmNodeDrained", "Slurm node %s drained (%s); deleting pod", pod.Name, reason)
	return false, s.deletePodExpected(pod)
}

// setDeadline records when the node's last job will end, so that users (and
// describe) see how long a drain may take.
func (s *nodeSetSync) setDeadline(pod *corev1.Pod) {
	t, err := s.c.cfg.Slurm.JobEndDeadline(s.ctx, pod.Name)
	if err != nil || t.IsZero() {
		return
	}
	v := t.UTC().Format(time.RFC3339)
	if pod.Annotations[slinkyv1beta1.AnnotationPodDeadline] == v {
		return
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, slinkyv1beta1.AnnotationPodDeadline, v)
	_, _ = s.c.kube.CoreV1().Pods(pod.Namespace).Patch(s.ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
}

func withoutCordon(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if k != slinkyv1beta1.AnnotationPodCordon && k != slinkyv1beta1.AnnotationPodDeadline {
			out[k] = v
		}
	}
	return out
}

// busy reports whether the pod's Slurm node runs jobs.
func (c *Controller) busy(p *corev1.Pod) bool {
	st, ok := c.cfg.Slurm.Node(p.Name)
	return ok && st.Busy()
}
