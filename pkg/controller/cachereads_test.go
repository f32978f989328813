package controller_test

import (
	"context"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	vcfake "github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/fake"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// TestEveryCachedTypeIsDeclared: the shared caches are trimmed to what the
// controllers declare they read, so a controller that caches a type it did
// not declare would read objects cut down for others. Each registered
// controller is initialised alone, with every option that adds informers,
// and the informers it asked for are compared with its CacheReads. (Fake
// clientsets: only the informer wiring is under test here; the controllers'
// own tests run them against the real API server through the same transform.)
func TestEveryCachedTypeIsDeclared(t *testing.T) {
	for _, name := range framework.Names() {
		t.Run(name, func(t *testing.T) {
			c, err := framework.New(name)
			if err != nil {
				t.Fatal(err)
			}
			declared := map[reflect.Type]bool{}
			for _, r := range c.CacheReads() {
				declared[r.Type()] = true
			}
			kube, vc := kubefake.NewClientset(), vcfake.NewClientset()
			// Every kind a controller may wait for is served.
			kube.Resources = []*metav1.APIResourceList{{GroupVersion: "slinky.slurm.net/v1beta1", APIResources: []metav1.APIResource{
				{Name: "nodesets", Namespaced: true}, {Name: "controllers", Namespaced: true}, {Name: "restapis", Namespaced: true}}}}
			kf := kubeinformers.NewSharedInformerFactory(kube, 0)
			vf := vcinformers.NewSharedInformerFactory(vc, 0)
			// As the manager wires them: the field-selected informers are
			// trimmed by the same declarations.
			ff := framework.NewFieldInformers(kube)
			if err := c.Initialize(context.Background(), &framework.ControllerOption{
				KubeClient: kube, VolcanoClient: vc, KubeInformerFactory: kf, VolcanoInformerFactory: vf,
				FieldInformers: ff, Recorder: record.NewFakeRecorder(10), FeatureGates: framework.NewFeatureGate(),
			}); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			defer func() { close(stop); kf.Shutdown(); vf.Shutdown(); ff.Shutdown() }()
			kf.Start(stop)
			vf.Start(stop)
			ff.Start(stop)
			cached := map[reflect.Type]bool{}
			for typ := range kf.WaitForCacheSync(stop) {
				cached[typ] = true
			}
			for typ := range vf.WaitForCacheSync(stop) {
				cached[typ] = true
			}
			for typ := range ff.WaitForCacheSync(stop) {
				cached[typ] = true
			}
			if len(cached) == 0 {
				t.Fatal("the controller caches nothing: the check would pass vacuously")
			}
			for typ := range cached {
				if !declared[typ] {
					t.Errorf("caches %v but CacheReads does not declare it", typ)
				}
			}
			for typ := range declared {
				if !cached[typ] {
					t.Errorf("declares %v but does not cache it", typ)
				}
			}
		})
	}
}

// The queue controller reads podgroups another way (Table rows) only when
// no other running controller caches them: with the podgroup controller in
// the process the API server would otherwise send every podgroup twice.
func TestPodGroupsCachedByOthers(t *testing.T) {
	queueCtl, err := framework.New("queue")
	if err != nil {
		t.Fatal(err)
	}
	podgroupCtl, err := framework.New("podgroup")
	if err != nil {
		t.Fatal(err)
	}
	if !framework.CachedByOthers[v1beta1.PodGroup]([]framework.Controller{queueCtl, podgroupCtl}, "queue") {
		t.Error("with the podgroup controller running, podgroups are not cached by another")
	}
	if framework.CachedByOthers[v1beta1.PodGroup]([]framework.Controller{queueCtl}, "queue") {
		t.Error("the queue controller alone counts as another reader of podgroups")
	}
}
