package nodeset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// Bounds of a Kubernetes node's features annotation: a longer value is not
// read, a feature past maxFeatureLen or beyond the first maxFeatures is
// dropped, and so is one holding a character outside featureChars (Slurm
// reads ',', '&', '|', '[', ']', '*', '(' and ')' in a feature list as
// operators, and a space ends a scontrol argument).
const (
	maxFeaturesBytes = 4096
	maxFeatures      = 64
	maxFeatureLen    = 64
	featureChars     = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-:/+=@"
)

// annotationSlurmFeatures records, on a pod, the features of its node's
// annotation last set on its Slurm node (sorted, comma-separated), so
// that an unchanged annotation costs no Slurm call.
const annotationSlurmFeatures = "kubectl-vc.io/slurm-features"

// wantedFeatures is the node annotation's features, prefixed with
// NodeFeaturePrefix, sorted and without duplicates.
func wantedFeatures(v string) []string {
	var out []string
	for f := range strings.SplitSeq(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" || len(f) > maxFeatureLen || strings.Trim(f, featureChars) != "" {
			continue
		}
		out = append(out, slinkyv1beta1.NodeFeaturePrefix+f)
		if len(out) == maxFeatures {
			break
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// syncFeatures sets, as Slinky's operator does, the Slurm node features of
// each scheduled pod from its Kubernetes node's annotation
// features.slinky.slurm.net/spec: each, prefixed "k8s/", replaces the
// node's "k8s/" features; every other feature (slurm.conf's, extraConf's,
// an administrator's) is kept. An annotation removed removes them. A pod
// whose record (annotationSlurmFeatures) says the same is not asked about.
func (s *nodeSetSync) syncFeatures(ctx context.Context) {
	fc, ok := s.slurm.(slurm.FeatureClient)
	if !ok {
		return
	}
	for i, p := range s.active {
		if p.Spec.NodeName == "" {
			continue
		}
		node, err := s.c.nodes.Get(p.Spec.NodeName)
		if err != nil {
			continue
		}
		v, annotated := node.Annotations[slinkyv1beta1.AnnotationNodeFeaturesSpec]
		if len(v) > maxFeaturesBytes {
			continue
		}
		want := wantedFeatures(v)
		record, recorded := p.Annotations[annotationSlurmFeatures]
		if !annotated && !recorded || recorded && record == strings.Join(want, ",") {
			continue
		}
		name := slinkyv1beta1.SlurmNodeName(p)
		have, err := fc.NodeFeatures(ctx, name)
		if errors.Is(err, slurm.ErrNodeNotFound) {
			continue // slurmd has not registered yet
		}
		if err != nil {
			s.errs = append(s.errs, fmt.Errorf("features of Slurm node %s: %w", name, err))
			continue
		}
		next := slices.DeleteFunc(slices.Clone(have), func(f string) bool { return strings.HasPrefix(f, slinkyv1beta1.NodeFeaturePrefix) })
		next = append(next, want...)
		if !slices.Equal(slices.Sorted(slices.Values(have)), slices.Sorted(slices.Values(next))) {
			if err := fc.SetNodeFeatures(ctx, name, next); err != nil {
				s.errs = append(s.errs, fmt.Errorf("features of Slurm node %s: %w", name, err))
				continue
			}
		}
		var rec *string
		if annotated {
			v := strings.Join(want, ",")
			rec = &v
		}
		if err := s.annotateActive(ctx, i, annotationSlurmFeatures, rec); err != nil {
			s.errs = append(s.errs, err)
		}
	}
}
