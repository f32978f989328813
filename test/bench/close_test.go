// Package bench holds the benchmarks of 'kubectl vc serve' against the real
// local API server. Run them with 'make bench'; results are in
// docs/benchmarks.md.
package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	schedulingac "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// BenchmarkCloseLatency measures Command created -> status Closed for 1,
// 200 and 1000 empty queues closed at once, handled by serve's queue
// controller at its default settings and, in the same run, by the floor (a
// bare client making only the two required writes per close, 32 at once),
// in every setup (see allSetups; the setup's creators create the
// Commands); it reports both, their ratio, and the API writes per close.
func BenchmarkCloseLatency(b *testing.B) {
	cp := cptest.Start(b)
	cfg := cp.AdminConfig() // QPS -1: no client-side throttle, same for every size
	vc := versioned.NewForConfigOrDie(cfg)
	base := passHandlersFor(b, cp, cfg)
	// serve once, to create root and default as it does on every start.
	startController(b, cfg, "queue", "--ensure-default-queues=true")()
	serveFlags := closeServeFlags()

	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("queues=%d", n), func(b *testing.B) {
			for _, s := range benchSetups(b) {
				h := base
				h.s = s
				b.Run(s.name, func(b *testing.B) {
					for range b.N {
						floors, serves := alternate(b, benchRounds(), func() closeResult {
							return runClose(b, vc, fmt.Sprintf("f%d-%s", n, rand.String(5)), n, s, func() handler {
								return h.floor(b, "close", func(cfg *rest.Config) func() { return startCloseFloor(b, cfg) })
							})
						}, func() closeResult {
							return runClose(b, vc, fmt.Sprintf("s%d-%s", n, rand.String(5)), n, s, func() handler {
								return h.serve(b, "queue", serveFlags...)
							})
						})
						reportCloses(b, n, s, floors, serves)
					}
				})
			}
		})
	}
}

// reportCloses logs each round of n closes in setup s and reports the
// medians over the rounds (one round: its values).
func reportCloses(b *testing.B, n int, s setup, floors, serves []closeResult) {
	ratio := ratios(floors, serves, func(r closeResult) time.Duration { return r.total })
	for i := range serves {
		b.Logf("queues=%d %s round %d: serve total %.0f ms p99 %.0f ms, floor total %.0f ms p99 %.0f ms, serve/floor %.2f",
			n, s.name, i+1, ms(serves[i].total), serves[i].pct(0.99), ms(floors[i].total), floors[i].pct(0.99), ratio[i])
	}
	b.ReportMetric(medianOf(serves, func(r closeResult) float64 { return r.pct(0.50) }), "p50-ms")
	b.ReportMetric(medianOf(serves, func(r closeResult) float64 { return r.pct(0.99) }), "p99-ms")
	b.ReportMetric(medianOf(serves, func(r closeResult) float64 { return ms(r.total) }), "total-ms")
	b.ReportMetric(medianOf(floors, func(r closeResult) float64 { return r.pct(0.99) }), "floor-p99-ms")
	b.ReportMetric(medianOf(floors, func(r closeResult) float64 { return ms(r.total) }), "floor-total-ms")
	b.ReportMetric(median(ratio), "serve/floor")
	b.ReportMetric(medianOf(serves, func(r closeResult) float64 { return r.stateWrites / float64(n) }), "state-writes/close")
	b.ReportMetric(medianOf(serves, func(r closeResult) float64 { return r.events / float64(n) }), "event-posts/close")
	b.ReportMetric(medianOf(serves, func(r closeResult) float64 { return r.writes / float64(n) }), "writes/close")
	b.ReportMetric(medianOf(floors, func(r closeResult) float64 { return r.writes / float64(n) }), "floor-writes/close")
}

// closeServeFlags are the queue controller's flags in the serve runs:
// its defaults, unless VC_BENCH_QUEUE_WORKERS sets the worker count (to
// size the default from measurement).
func closeServeFlags() []string {
	flags := []string{"--ensure-default-queues=true"}
	if w := envInt("VC_BENCH_QUEUE_WORKERS", 0); w > 0 {
		flags = append(flags, fmt.Sprintf("--workers-queue=%d", w))
	}
	return flags
}

// benchSizes are the numbers of queues closed at once.
var benchSizes = []int{1, 200, 1000}

// closeResult is one pass: latencies sorted, first create -> last Closed,
// and the handler's writes.
type closeResult struct {
	lat                         []time.Duration
	total                       time.Duration
	stateWrites, events, writes float64
}

func (r closeResult) pct(p float64) float64 { return ms(r.lat[int(p*float64(len(r.lat)-1))]) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// runClose creates n Open queues, starts a handler (serve's controller or
// the floor), creates a CloseQueue Command for each at once (creators at a time)
// and times them until an informer sees every queue Closed; then it stops
// the handler and deletes the queues, so the next pass starts from the
// same cluster.
func runClose(b *testing.B, vc versioned.Interface, prefix string, n int, s setup, start func() handler) closeResult {
	ctx := context.Background()
	b.StopTimer()
	queues := make([]*v1beta1.Queue, n)
	parallel(n, func(i int) {
		name := fmt.Sprintf("%s-%04d", prefix, i)
		q, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1beta1.QueueSpec{Weight: 1, Parent: "root"},
		}, metav1.CreateOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		// Open as serve leaves a new queue, written here so that neither
		// handler has anything to do before the Commands.
		if q, err = vc.SchedulingV1beta1().Queues().ApplyStatus(ctx, closedOrOpen(name, v1beta1.QueueStateOpen),
			metav1.ApplyOptions{FieldManager: keys.QueueControllerManager, Force: true}); err != nil {
			b.Error(err)
			return
		}
		queues[i] = q
	})
	if b.Failed() {
		b.FailNow()
	}
	waitAll(b, vc, prefix, n, v1beta1.QueueStateOpen)

	var mu sync.Mutex
	created := map[string]time.Time{}
	closedAt := map[string]time.Time{}
	allClosed := make(chan struct{})
	// An informer (not a bare watch) observes the closes: it re-establishes
	// its watch if the server ends it, so no transition is missed.
	inf := vcinformers.NewSharedInformerFactory(vc, 0)
	qi := inf.Scheduling().V1beta1().Queues().Informer()
	_, _ = qi.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		q := obj.(*v1beta1.Queue)
		if !strings.HasPrefix(q.Name, prefix+"-") || q.Status.State != v1beta1.QueueStateClosed {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, seen := closedAt[q.Name]; !seen {
			closedAt[q.Name] = time.Now()
			if len(closedAt) == n {
				close(allClosed)
			}
		}
	}})
	infStop := make(chan struct{})
	inf.Start(infStop)
	inf.WaitForCacheSync(infStop)
	// One function, in this order: Shutdown waits for the informers, which
	// only end once infStop is closed.
	stopInformer := func() {
		close(infStop)
		inf.Shutdown()
	}

	var r closeResult
	h, before := startDuring(b, s, start, func(begin func()) {
		b.StartTimer()
		startAt := time.Now()
		begin()
		closeAll(b, vc, prefix, n, s.creators, queues, &mu, created, closedAt, allClosed)
		r.total = time.Since(startAt)
		b.StopTimer()
	})
	stopInformer()

	// Wait for every Command to be deleted before counting writes.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		l, err := vc.BusV1alpha1().Commands("default").List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		b.Fatal("Commands not deleted")
	}
	after := h.requests(true)
	h.stop()
	r.stateWrites = diff(before, after, http.MethodPatch, http.MethodDelete)
	r.events = diff(before, after, http.MethodPost)
	r.writes = diff(before, after, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete)

	for name, t := range closedAt {
		r.lat = append(r.lat, t.Sub(created[name]))
	}
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })

	parallel(n, func(i int) {
		if err := vc.SchedulingV1beta1().Queues().Delete(ctx, queues[i].Name, metav1.DeleteOptions{}); err != nil {
			b.Error(err)
		}
	})
	return r
}

// closedOrOpen is the status the queue controller writes for an empty queue
// in state s: the state and zero counts, in one apply.
func closedOrOpen(name string, s v1beta1.QueueState) *schedulingac.QueueApplyConfiguration {
	return schedulingac.Queue(name).WithStatus(schedulingac.QueueStatus().WithState(s).
		WithInqueue(0).WithPending(0).WithRunning(0).WithUnknown(0).WithCompleted(0))
}

// startCloseFloor starts the floor for closes: a watch (informer) on the
// Commands, and for each CloseQueue Command, 32 at once, the two writes a
// close requires: the queue's status (state Closed, one apply) and then the
// Command's delete. Nothing else is read or written.
func startCloseFloor(b testing.TB, cfg *rest.Config) (stop func()) {
	vc := versioned.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	work := make(chan *busv1alpha1.Command, 1<<16)
	inf := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, vcinformers.WithNamespace("default"))
	_, _ = inf.Bus().V1alpha1().Commands().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if cmd := obj.(*busv1alpha1.Command); cmd.Action == busv1alpha1.CloseQueueAction && cmd.TargetObject != nil {
			work <- cmd
		}
	}})
	done := floorWorkers(ctx, work, func(ctx context.Context, cmd *busv1alpha1.Command) error {
		if _, err := vc.SchedulingV1beta1().Queues().ApplyStatus(ctx, closedOrOpen(cmd.TargetObject.Name, v1beta1.QueueStateClosed),
			metav1.ApplyOptions{FieldManager: keys.QueueControllerManager, Force: true}); err != nil {
			return err
		}
		err := vc.BusV1alpha1().Commands(cmd.Namespace).Delete(ctx, cmd.Name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	return runFloor(b, ctx, cancel, inf, done)
}

func waitAll(b *testing.B, vc versioned.Interface, prefix string, n int, s v1beta1.QueueState) {
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		c := 0
		for _, q := range l.Items {
			if strings.HasPrefix(q.Name, prefix+"-") && q.Status.State == s {
				c++
			}
		}
		return c == n, nil
	})
	if err != nil {
		b.Fatalf("queues of %s not all %s", prefix, s)
	}
}

// parallel runs f(0) … f(n-1), 32 at a time.
func parallel(n int, f func(i int)) { parallelN(n, 32, f) }

// parallelN runs f(0) … f(n-1), k at a time.
func parallelN(n, k int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, k)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// settled returns the request counts once they stop moving: events are
// posted asynchronously and would otherwise be counted in the wrong run.
func settled(b *testing.B, addr string) map[string]float64 {
	prev := requests(b, addr)
	// Bounded: only writes are compared (reads such as watch renewals may
	// keep moving), and after 15 s the counts are taken as they are.
	for range 15 {
		time.Sleep(time.Second)
		cur := requests(b, addr)
		same := true
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			same = same && prev[m] == cur[m]
		}
		if same {
			return cur
		}
		prev = cur
	}
	return prev
}

// requests reads the controller's rest_client_requests_total by method.
func requests(b *testing.B, addr string) map[string]float64 {
	resp, err := fetch(addr, "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		i := strings.Index(line, `method="`)
		m := line[i+8:]
		m = m[:strings.IndexByte(m, '"')]
		v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		out[m] += v
	}
	return out
}

// closeAll creates a CloseQueue Command for each of queues, creators at a
// time, recording when, and waits until the informer of runClose has seen
// every queue Closed.
func closeAll(b *testing.B, vc versioned.Interface, prefix string, n, creators int, queues []*v1beta1.Queue,
	mu *sync.Mutex, created, closedAt map[string]time.Time, allClosed chan struct{}) {
	ctx := context.Background()
	parallelN(n, creators, func(i int) {
		q := queues[i]
		ref := metav1.NewControllerRef(q, v1beta1.SchemeGroupVersion.WithKind("Queue"))
		mu.Lock()
		created[q.Name] = time.Now()
		mu.Unlock()
		_, err := vc.BusV1alpha1().Commands("default").Create(ctx, &busv1alpha1.Command{
			ObjectMeta: metav1.ObjectMeta{GenerateName: q.Name + "-closequeue-", OwnerReferences: []metav1.OwnerReference{*ref}},
			Action:     busv1alpha1.CloseQueueAction, TargetObject: ref,
		}, metav1.CreateOptions{})
		if err != nil {
			b.Error(err)
		}
	})
	select {
	case <-allClosed:
	case <-time.After(5 * time.Minute):
		l, _ := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
		c := 0
		for _, q := range l.Items {
			if strings.HasPrefix(q.Name, prefix+"-") && q.Status.State == v1beta1.QueueStateClosed {
				c++
			}
		}
		cmds, _ := vc.BusV1alpha1().Commands("default").List(ctx, metav1.ListOptions{})
		mu.Lock()
		seen := len(closedAt)
		mu.Unlock()
		b.Fatalf("queues did not all close: %d Closed by list, %d seen by the informer, %d Commands left", c, seen, len(cmds.Items))
	}
}
