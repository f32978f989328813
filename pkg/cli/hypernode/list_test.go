package hypernode

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/list"
	clitesting "github.com/kubectl-vc/kubectl-vc/pkg/cli/testing"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
)

// TestListCreatedBetweenReads: the table reads the topology, then the
// list; a HyperNode created in between (the first read misses it, the
// second has it) is resolved against the nodes, not shown as unknown.
func TestListCreatedBetweenReads(t *testing.T) {
	rack := topologyv1alpha1.HyperNode{ObjectMeta: metav1.ObjectMeta{Name: "rack"}, Spec: topologyv1alpha1.HyperNodeSpec{Tier: 1,
		Members: []topologyv1alpha1.MemberSpec{{Type: topologyv1alpha1.MemberTypeNode,
			Selector: topologyv1alpha1.MemberSelector{ExactMatch: &topologyv1alpha1.ExactMatch{Name: "n1"}}}}}}
	vc := vcfake.NewSimpleClientset()
	lists := 0
	vc.PrependReactor("list", "hypernodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		if lists == 1 {
			return true, &topologyv1alpha1.HyperNodeList{}, nil
		}
		return true, &topologyv1alpha1.HyperNodeList{Items: []topologyv1alpha1.HyperNode{rack}}, nil
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := &ListOptions{List: list.NewOptions(clitesting.Factory{Volcano: vc, Kube: kubefake.NewSimpleClientset(node)}, streams).Named("hypernode", validateName)}
	o.List.ClusterScoped = true
	if err := o.Complete(nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lists != 2 || !strings.Contains(out.String(), "n1") || !strings.Contains(out.String(), "cpu=2") || errOut.Len() != 0 {
		t.Errorf("lists %d, stdout:\n%s\nstderr:\n%s", lists, out, errOut)
	}
}
