package podgroup

import (
	"testing"

	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// Informers wired by hand (no field informers): every scheduler name gets
// the shared pod informer, which must be used once, or each pod would be
// listed once per name and the indexers added twice.
func TestPodCacheKeepsTheSharedInformerOnce(t *testing.T) {
	kube := kubefake.NewClientset()
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	pc := newPodCache(&framework.ControllerOption{KubeInformerFactory: kf}, []string{"volcano", "volcano-two"})
	if len(pc.informers) != 1 {
		t.Fatalf("%d pod informers over one shared factory, want 1", len(pc.informers))
	}
	ff := framework.NewFieldInformers(kube)
	pc = newPodCache(&framework.ControllerOption{KubeInformerFactory: kf, FieldInformers: ff}, []string{"volcano", "volcano-two", "volcano"})
	if len(pc.informers) != 2 {
		t.Fatalf("%d pod informers for two scheduler names, want 2", len(pc.informers))
	}
}
