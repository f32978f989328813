package nodeset

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// TestKeepNodeReasonsLeavesSharedMapsAlone: the cache's annotation maps are
// shared between Nodes with equal ones (framework.Interner). Cutting one
// node's over-long features or topology must not write into that map, which
// other nodes' cached copies hold.
func TestKeepNodeReasonsLeavesSharedMapsAlone(t *testing.T) {
	long := strings.Repeat("f", maxFeaturesBytes+100)
	for _, key := range []string{slinkyv1beta1.AnnotationNodeFeaturesSpec, slinkyv1beta1.AnnotationNodeTopologySpec} {
		src := &corev1.Node{}
		src.Annotations = map[string]string{key: long, "other": "x"}
		shared := maps.Clone(src.Annotations)
		dst := &corev1.Node{}
		dst.Annotations = shared
		(&Controller{}).keepNodeReasons(dst, src)
		if shared[key] != long || len(shared) != 2 {
			t.Errorf("%s: the shared map was written to: its value is now %d bytes", key, len(shared[key]))
		}
		if got := dst.Annotations[key]; len(got) >= len(long) || !strings.HasPrefix(long, got) {
			t.Errorf("%s: the cached value is %d bytes, want it cut", key, len(got))
		}
		if dst.Annotations["other"] != "x" {
			t.Errorf("%s: the node's other annotations were lost: %v", key, dst.Annotations)
		}
	}
}
