package nodeset

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
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

// TestCacheKeepsAnnotationsRead: the pod and Node caches keep the
// annotations the controller reads, of its own pods (controlled by a
// NodeSet, or orphans it may adopt) only; a tenant's annotations, on its
// pods or on ours, are not cached.
func TestCacheKeepsAnnotationsRead(t *testing.T) {
	trim := framework.CacheTransform(New(Config{}))
	read := map[string]string{slinkyv1beta1.AnnotationPodCordon: "true", slinkyv1beta1.AnnotationPodDeletionCost: "5",
		annotationNodeCordon: "n1", annotationSlurmFeatures: "a", slinkyv1beta1.AnnotationPodDeadline: "t"}
	withBlob := func() map[string]string {
		a := maps.Clone(read)
		a["example.com/blob"] = strings.Repeat("x", 64<<10)
		return a
	}
	isController := true
	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
		want map[string]string
	}{
		{"a NodeSet's pod", metav1.ObjectMeta{Name: "w-0", Annotations: withBlob(), OwnerReferences: []metav1.OwnerReference{{
			APIVersion: slinkyv1beta1.SchemeGroupVersion.String(), Kind: "NodeSet", Name: "w", UID: "u", Controller: &isController}}}, read},
		{"an orphan a NodeSet may adopt", metav1.ObjectMeta{Name: "w-1", Annotations: withBlob(),
			Labels: map[string]string{slinkyv1beta1.LabelAppName: slinkyv1beta1.AppName}}, read},
		{"a tenant's pod", metav1.ObjectMeta{Name: "x", Annotations: withBlob()}, nil},
		{"a ReplicaSet's pod", metav1.ObjectMeta{Name: "y", Annotations: withBlob(), OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: &isController}}}, nil},
	} {
		out, err := trim(&corev1.Pod{ObjectMeta: tc.meta})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.(*corev1.Pod).Annotations; !maps.Equal(got, tc.want) {
			t.Errorf("%s: cached annotations %v, want %v", tc.name, got, tc.want)
		}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
		slinkyv1beta1.AnnotationNodeHostnameOverride: "h", slinkyv1beta1.AnnotationNodeTopologySpec: "t",
		"node.alpha.kubernetes.io/ttl": "0", "example.com/blob": strings.Repeat("x", 64<<10)}}}
	out, err := trim(node)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{slinkyv1beta1.AnnotationNodeHostnameOverride: "h", slinkyv1beta1.AnnotationNodeTopologySpec: "t"}
	if got := out.(*corev1.Node).Annotations; !maps.Equal(got, want) {
		t.Errorf("cached Node annotations %v, want %v", got, want)
	}
}
