package bench

import (
	"runtime"
	"testing"

	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/nodeset"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// BenchmarkInformerMemory measures what serve's informer caches cost with
// each transform: none, managedFields dropped (what serve did before the
// caches were trimmed to the controllers' CacheReads), and the real
// transform of serve for the queue and podgroup controllers and for all
// controllers (the NodeSet controller reads more of a pod). Objects are
// realistic: running training pods with env, volumes, probes and a
// kubelet's status; podgroups with the scheduler's conditions. Reported:
// the live heap of the synced cache.
func BenchmarkInformerMemory(b *testing.B) {
	npods, npg := envInt("VC_BENCH_MEM_PODS", 5000), envInt("VC_BENCH_MEM_PODGROUPS", 20000)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig()
	kube := kubernetes.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)
	createRealisticPods(b, kube, npods, nil)
	createRealisticPodGroups(b, vc, npg, func(int) string { return "default" },
		func(i int) v1beta1.PodGroupPhase { return coldPhases[i%len(coldPhases)] })
	if b.Failed() {
		return
	}
	variants := []struct {
		name string
		fn   cache.TransformFunc
	}{
		{"none", nil},
		{"managedFields", framework.CacheTransform()},
		{"queue+podgroup", framework.CacheTransform(controllers(b, "queue", "podgroup")...)},
		{"all", framework.CacheTransform(controllers(b, framework.Names()...)...)},
	}
	for _, v := range variants {
		b.Run("pods/"+v.name, func(b *testing.B) {
			for range b.N {
				heap := cachedHeap(b, func(stop chan struct{}) cache.SharedIndexInformer {
					opts := []kubeinformers.SharedInformerOption{}
					if v.fn != nil {
						opts = append(opts, kubeinformers.WithTransform(v.fn))
					}
					f := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, opts...)
					inf := f.Core().V1().Pods().Informer()
					f.Start(stop)
					return inf
				})
				b.ReportMetric(heap/(1<<20), "MiB-heap")
				b.ReportMetric(heap/float64(npods), "B/object")
			}
		})
		b.Run("podgroups/"+v.name, func(b *testing.B) {
			for range b.N {
				heap := cachedHeap(b, func(stop chan struct{}) cache.SharedIndexInformer {
					opts := []vcinformers.SharedInformerOption{}
					if v.fn != nil {
						opts = append(opts, vcinformers.WithTransform(v.fn))
					}
					f := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, opts...)
					inf := f.Scheduling().V1beta1().PodGroups().Informer()
					f.Start(stop)
					return inf
				})
				b.ReportMetric(heap/(1<<20), "MiB-heap")
				b.ReportMetric(heap/float64(npg), "B/object")
			}
		})
	}
}

// controllers are fresh instances of the named registered controllers.
func controllers(b *testing.B, names ...string) []framework.Controller {
	var out []framework.Controller
	for _, n := range names {
		c, err := framework.New(n)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// cachedHeap is the live heap a synced informer adds, measured after GC
// with the informer still referenced.
func cachedHeap(b *testing.B, start func(stop chan struct{}) cache.SharedIndexInformer) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	inf := start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		b.Fatal("cache not synced")
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := len(inf.GetStore().ListKeys())
	close(stop)
	runtime.KeepAlive(inf)
	if n == 0 {
		b.Fatal("empty cache")
	}
	return float64(int64(after.HeapAlloc) - int64(before.HeapAlloc))
}
