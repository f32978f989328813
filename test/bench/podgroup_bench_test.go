package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane/cptest"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
)

// pgCallCounter counts the requests the controller sends, by kind: reads
// (GET, and LIST/WATCH of the informers), and writes (everything else).
type pgCallCounter struct {
	reads, writes atomic.Int64
}

// pgCounting is one client's transport feeding the shared counter.
type pgCounting struct {
	next http.RoundTripper
	c    *pgCallCounter
}

func (t pgCounting) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		t.c.reads.Add(1)
	} else {
		t.c.writes.Add(1)
	}
	return t.next.RoundTrip(req)
}

// BenchmarkPodGroupThroughput measures how fast standalone pods get their
// groups: from the first pod created to every pod annotated with its
// group-name and every group present, for 1 000 and 5 000 pods created at
// once, with the default 5 workers (and 20). It also reports the API calls the
// controller makes per pod; the floor is 2 (create the group, patch the pod).
func BenchmarkPodGroupThroughput(b *testing.B) {
	cp := cptest.Start(b)
	cfg := cp.AdminConfig() // QPS -1: no client-side throttle, same for every size
	kube := kubernetes.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)

	counter := &pgCallCounter{}
	ctrlCfg := rest.CopyConfig(cfg)
	ctrlCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return pgCounting{next: rt, c: counter} })

	// The default 5 workers at both sizes; 20 workers at the larger size
	// shows whether the workers or the API server are the limit.
	for _, run := range []struct {
		workers int
		sizes   []int
	}{{5, []int{1000, 5000}}, {20, []int{5000}}} {
		pg, err := framework.Configure("podgroup", fmt.Sprintf("--workers-podgroup=%d", run.workers),
			"--scheduler-name=volcano", "--inherit-owner-annotations=true")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- controller.Run(ctx, ctrlCfg, controller.Options{
				Controllers: []framework.Controller{pg}, MaxRequeueNum: 15, HealthAddr: "0", MetricsAddr: "0",
			})
		}()
		for _, n := range run.sizes {
			b.Run(fmt.Sprintf("workers=%d/pods=%d", run.workers, n), func(b *testing.B) {
				for i := range b.N {
					ns := fmt.Sprintf("pgbench-w%d-%d-%d", run.workers, n, i)
					if _, err := kube.CoreV1().Namespaces().Create(context.Background(),
						&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
						b.Fatal(err)
					}
					r0, w0 := counter.reads.Load(), counter.writes.Load()
					elapsed, created := pgRun(b, kube, vc, ns, n)
					reads, writes := counter.reads.Load()-r0, counter.writes.Load()-w0
					b.ReportMetric(float64(n)/elapsed.Seconds(), "pods/s")
					// How fast the benchmark itself could create the pods: the
					// throughput above cannot beat it.
					b.ReportMetric(float64(n)/created.Seconds(), "created/s")
					b.ReportMetric(float64(writes)/float64(n), "writes/pod")
					b.ReportMetric(float64(reads+writes)/float64(n), "calls/pod")
				}
			})
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// pgRun creates n standalone pods from 16 goroutines and waits, through
// informers of its own, until all are annotated and all groups exist.
func pgRun(b *testing.B, kube kubernetes.Interface, vc versioned.Interface, ns string, n int) (total, created time.Duration) {
	b.Helper()
	var annotated, groups atomic.Int64
	finished := make(chan struct{})
	var once sync.Once
	check := func() {
		if annotated.Load() >= int64(n) && groups.Load() >= int64(n) {
			once.Do(func() { close(finished) })
		}
	}
	stop := make(chan struct{})
	defer close(stop)
	kf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithNamespace(ns))
	seen := sync.Map{}
	onPod := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Annotations[keys.KubeGroupName] != "" {
			if _, dup := seen.LoadOrStore(p.Name, true); !dup {
				annotated.Add(1)
				check()
			}
		}
	}
	_, _ = kf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, cur any) { onPod(cur) },
	})
	vf := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, vcinformers.WithNamespace(ns))
	_, _ = vf.Scheduling().V1beta1().PodGroups().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if _, ok := obj.(*v1beta1.PodGroup); ok {
				groups.Add(1)
				check()
			}
		},
	})
	kf.Start(stop)
	vf.Start(stop)
	kf.WaitForCacheSync(stop)
	vf.WaitForCacheSync(stop)

	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				_, err := kube.CoreV1().Pods(ns).Create(context.Background(), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d", i)},
					Spec: corev1.PodSpec{SchedulerName: "volcano", Containers: []corev1.Container{{
						Name: "c", Image: "registry.example/app:1",
					}}},
				}, metav1.CreateOptions{})
				if err != nil && !strings.Contains(err.Error(), "already exists") {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	created = time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	select {
	case <-finished:
	case <-time.After(10 * time.Minute):
		b.Fatalf("after 10m: %d/%d pods annotated, %d/%d groups", annotated.Load(), n, groups.Load(), n)
	}
	total = time.Since(start)
	b.StopTimer()
	return total, created
}
