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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"

	"github.com/kubectl-vc/kubectl-vc/plugins/podgroup"
)

// BenchmarkPodGroupThroughput measures how fast standalone pods get their
// groups: from the first pod created to every pod annotated with its
// group-name and every group present, for 1 000 and 5 000 pods created at
// once, handled by serve's podgroup controller at its default settings and,
// in the same run, by the floor (a bare client making only the two
// required writes per pod, 32 at once). Each size runs in every setup
// (see allSetups: in-process with 16 or 32 creators, or serve and the
// floor as processes of their own with 32), each setup's rounds
// alternating floor and serve. It also reports the API calls the
// controller makes per pod; the floor is 2 (create the group, patch the
// pod).
func BenchmarkPodGroupThroughput(b *testing.B) {
	cp := cptest.Start(b)
	cfg := cp.AdminConfig() // QPS -1: no client-side throttle, same for every size
	kube := kubernetes.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)
	base := passHandlersFor(b, cp, cfg)
	_, apiserver := cp.Pids()

	flags := []string{"--scheduler-name=volcano", "--inherit-owner-annotations=true"}
	// VC_BENCH_PODGROUP_WORKERS sets the worker count, to size the default
	// from measurement; unset, serve's default is measured.
	if w := envInt("VC_BENCH_PODGROUP_WORKERS", 0); w > 0 {
		flags = append(flags, fmt.Sprintf("--workers-podgroup=%d", w))
	}
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			for _, s := range benchSetups(b) {
				h := base
				h.s = s
				b.Run(s.name, func(b *testing.B) {
					for range b.N {
						floors, serves := alternate(b, benchRounds(), func() pgResult {
							return pgPass(b, kube, vc, apiserver, fmt.Sprintf("pgfloor-%d-%s", n, rand.String(5)), n, s, func() handler {
								return h.floor(b, "podgroup", func(cfg *rest.Config) func() { return startPodGroupFloor(b, cfg) })
							})
						}, func() pgResult {
							return pgPass(b, kube, vc, apiserver, fmt.Sprintf("pgserve-%d-%s", n, rand.String(5)), n, s, func() handler {
								return h.serve(b, "podgroup", flags...)
							})
						})
						reportPodGroups(b, n, s, floors, serves)
					}
				})
			}
		})
	}
}

// reportPodGroups logs each round of n pods in setup s and reports the
// medians over the rounds (one round: its values).
func reportPodGroups(b *testing.B, n int, s setup, floors, serves []pgResult) {
	ratio := ratios(floors, serves, func(r pgResult) time.Duration { return r.total })
	for i := range serves {
		b.Logf("pods=%d %s round %d: serve %.0f pods/s, floor %.0f pods/s, serve/floor %.2f; API server CPU serve %.2f s, floor %.2f s",
			n, s.name, i+1, float64(n)/serves[i].total.Seconds(), float64(n)/floors[i].total.Seconds(), ratio[i],
			serves[i].apiCPU.Seconds(), floors[i].apiCPU.Seconds())
	}
	b.ReportMetric(medianOf(serves, func(r pgResult) float64 { return float64(n) / r.total.Seconds() }), "pods/s")
	b.ReportMetric(medianOf(floors, func(r pgResult) float64 { return float64(n) / r.total.Seconds() }), "floor-pods/s")
	b.ReportMetric(median(ratio), "serve/floor")
	b.ReportMetric(medianOf(serves, func(r pgResult) float64 { return r.apiCPU.Seconds() }), "s-apiserver-cpu")
	b.ReportMetric(medianOf(floors, func(r pgResult) float64 { return r.apiCPU.Seconds() }), "floor-s-apiserver-cpu")
	// How fast the benchmark itself could create the pods: the
	// throughput above cannot beat it.
	b.ReportMetric(medianOf(serves, func(r pgResult) float64 { return float64(n) / r.created.Seconds() }), "created/s")
	b.ReportMetric(medianOf(floors, func(r pgResult) float64 { return float64(n) / r.created.Seconds() }), "floor-created/s")
	b.ReportMetric(medianOf(serves, func(r pgResult) float64 { return r.writes / float64(n) }), "writes/pod")
	b.ReportMetric(medianOf(serves, func(r pgResult) float64 { return r.calls / float64(n) }), "calls/pod")
	b.ReportMetric(medianOf(floors, func(r pgResult) float64 { return r.writes / float64(n) }), "floor-writes/pod")
}

// pgResult is one pass of the podgroup benchmark.
type pgResult struct {
	total, created time.Duration
	// apiCPU is the API server's CPU from the first pod created to the
	// last grouped (the creations included).
	apiCPU        time.Duration
	writes, calls float64
}

// pgPass runs one pass in a fresh namespace: start the handler, create n
// pods and time them until grouped, count the handler's requests, stop it,
// and delete the pods and groups so the next pass starts from the same
// cluster (there is no namespace controller at this level).
func pgPass(b *testing.B, kube kubernetes.Interface, vc versioned.Interface, apiserver int, ns string, n int, s setup, start func() handler) pgResult {
	b.StopTimer()
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var r pgResult
	h, before := startDuring(b, s, start, func(begin func()) {
		apiBefore := procCPU(apiserver)
		r.total, r.created = pgRun(b, kube, vc, ns, n, s.creators, begin)
		r.apiCPU = procCPU(apiserver) - apiBefore
	})
	after := h.requests(true)
	h.stop()
	r.writes = diff(before, after, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete)
	r.calls = r.writes + diff(before, after, http.MethodGet)
	if err := kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := vc.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	return r
}

// startPodGroupFloor starts the floor for grouping pods: a watch (informer)
// on the pods, and for each new pod without a group, 32 at once, the two
// writes grouping requires, in the order that never lets a pod point at a
// group that does not exist: create the group (built by the podgroup
// controller's own Build, so the objects are the same), then patch the
// pod's annotation. Nothing else is read or written.
func startPodGroupFloor(b testing.TB, cfg *rest.Config) (stop func()) {
	kube := kubernetes.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	work := make(chan *corev1.Pod, 1<<16)
	// Only the pods of its scheduler, as serve watches them: the pods of
	// BenchmarkScale's fixture are mostly kube-scheduler's.
	inf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.schedulerName=volcano"
	}))
	_, _ = inf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if p := obj.(*corev1.Pod); p.Spec.SchedulerName == "volcano" && p.Annotations[keys.KubeGroupName] == "" {
			work <- p
		}
	}})
	done := floorWorkers(ctx, work, func(ctx context.Context, p *corev1.Pod) error {
		pg, _ := podgroup.Build(p, nil, true, time.Now())
		if _, err := vc.SchedulingV1beta1().PodGroups(p.Namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, keys.KubeGroupName, pg.Name)
		_, err := kube.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	})
	return runFloor(b, ctx, cancel, inf, done)
}

// pgRun creates n standalone pods from creators goroutines (calling begin
// as it starts) and waits, through
// informers of its own, until all are annotated and all groups exist.
func pgRun(b *testing.B, kube kubernetes.Interface, vc versioned.Interface, ns string, n, creators int, begin func()) (total, created time.Duration) {
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

	b.StartTimer()
	start := time.Now()
	begin()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	errs := make(chan error, creators)
	for range creators {
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
