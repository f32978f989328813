package nodeset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
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
func (s *nodeSetSync) syncTopology(ctx context.Context) {
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
		if err := s.annotateActive(ctx, i, slinkyv1beta1.AnnotationNodeTopologySpec, &want); err != nil {
			s.errs = append(s.errs, err)
		}
	}
}

// topologyChars are the characters of a topology Slurm is given: names of
// topologies, switches and blocks, ':' and ','. Anything else (a space
// ends a scontrol argument) keeps the value from Slurm; it is still copied
// to the pod.
const topologyChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-:,"

// annotationSlurmTopology records, on a pod, the topology of its node's
// annotation last set on its Slurm node, so that an unchanged annotation
// costs no Slurm call.
const annotationSlurmTopology = "kubectl-vc.io/slurm-topology"

// syncSlurmTopology sets, as Slinky's operator does, the topology of each
// scheduled pod's Slurm node to its Kubernetes node's annotation
// topology.slinky.slurm.net/spec (Slurm 25.05 and later: dynamic
// topology). Where the operator also sets "" on the Slurm node of a pod
// whose Kubernetes node has no annotation, taking it out of the topology
// its slurm.conf or topology.yaml gives it, this controller leaves such a
// node alone unless it set the topology itself (the pod's record,
// annotationSlurmTopology): an annotation removed then takes it out. A
// Slurm that cannot (before 25.05, or slurmrestd's REST v0.0.42) is said
// in one Warning event per sync; the pods still carry the value, which
// slurmd's image reads at registration (SLINKY_TOPOLOGY).
func (s *nodeSetSync) syncSlurmTopology(ctx context.Context) {
	tc, ok := s.slurm.(slurm.TopologyClient)
	if !ok {
		return
	}
	var unsupported error
	for i, p := range s.active {
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := s.c.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		want, annotated := node.Annotations[slinkyv1beta1.AnnotationNodeTopologySpec]
		if len(want) > maxTopologyBytes || strings.Trim(want, topologyChars) != "" {
			continue
		}
		record, recorded := p.Annotations[annotationSlurmTopology]
		if !annotated && !recorded || recorded && record == want {
			continue
		}
		name := slinkyv1beta1.SlurmNodeName(p)
		have, err := tc.NodeTopology(ctx, name)
		if err == nil && have != want {
			err = tc.SetNodeTopology(ctx, name, want)
		}
		switch {
		case errors.Is(err, slurm.ErrNodeNotFound):
			continue // slurmd has not registered yet
		case errors.Is(err, slurm.ErrTopologyUnsupported):
			unsupported = err
			continue
		case err != nil:
			s.errs = append(s.errs, fmt.Errorf("topology of Slurm node %s: %w", name, err))
			continue
		}
		rec := &want
		if !annotated {
			rec = nil
		}
		if err := s.annotateActive(ctx, i, annotationSlurmTopology, rec); err != nil {
			s.errs = append(s.errs, err)
		}
	}
	if unsupported != nil {
		// The recorder aggregates the repeats of each sync.
		s.c.recorder.Eventf(s.set, corev1.EventTypeWarning, "TopologyUnsupported",
			"node topology not set in Slurm (the pods carry it, for slurmd's registration): %v", unsupported)
	}
}
