package nodeset

import (
	"fmt"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// maxTopologyBytes bounds a Kubernetes node's topology annotation the
// controller copies to pods: a Slurm dynamic topology line names a few
// switches or blocks; a longer one is not copied.
const maxTopologyBytes = 4096

// syncTopology copies, as Slinky's operator does, each scheduled pod's
// Kubernetes node annotation topology.slinky.slurm.net/spec to the pod
// (empty when the node has none), where slurmd's image reads it
// (SLINKY_TOPOLOGY) to register its Slurm node in that topology. A value
// past maxTopologyBytes is not copied: the pod keeps what it has.
func (s *nodeSetSync) syncTopology() {
	for i, p := range s.active {
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := s.c.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		want := node.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec]
		if len(want) > maxTopologyBytes {
			continue
		}
		if have, ok := p.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec]; ok && have == want {
			continue
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, slinkyv1beta1.AnnotationNodeTopologySpec, want)
		if err := s.patchPod(p, patch); err != nil {
			s.errs = append(s.errs, err)
			continue
		}
		q := p.DeepCopy()
		if q.Annotations == nil {
			q.Annotations = map[string]string{}
		}
		q.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec] = want
		s.active[i] = q
	}
}
