// Package bench holds the benchmarks of 'kubectl vc serve' against the real
// local API server. Run them with 'make bench'; results are in
// docs/benchmarks.md.
package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/controlplane/cptest"

	_ "github.com/kubectl-vc/kubectl-vc/plugins/queue"
)

// BenchmarkCloseLatency measures Command created -> status Closed for 1,
// 200 and 1000 empty queues closed at once, and the API writes the
// controller makes per close (counted by its own request counter).
func BenchmarkCloseLatency(b *testing.B) {
	cp := cptest.Start(b)
	cfg := cp.AdminConfig() // QPS -1: no client-side throttle, same for every size
	vc := versioned.NewForConfigOrDie(cfg)

	metricsAddr := freeAddr(b)
	q, err := framework.Configure("queue", "--workers-queue=5", "--ensure-default-queues=true")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, cfg, controller.Options{
			Controllers: []framework.Controller{q}, MaxRequeueNum: 15, MetricsAddr: metricsAddr, HealthAddr: "0",
		})
	}()
	b.Cleanup(func() {
		cancel()
		<-done
	})

	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("queues=%d", n), func(b *testing.B) {
			for i := range b.N {
				runClose(b, vc, metricsAddr, fmt.Sprintf("b%d-%d", n, i), n)
			}
		})
	}
}

// benchSizes are the numbers of queues closed at once.
var benchSizes = []int{1, 200, 1000}

func runClose(b *testing.B, vc versioned.Interface, metricsAddr, prefix string, n int) {
	ctx := context.Background()
	b.StopTimer()
	queues := make([]*v1beta1.Queue, n)
	parallel(n, func(i int) {
		q, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%04d", prefix, i)},
			Spec:       v1beta1.QueueSpec{Weight: 1, Parent: "root"},
		}, metav1.CreateOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		queues[i] = q
	})
	if b.Failed() {
		b.FailNow()
	}
	waitAll(b, vc, prefix, n, v1beta1.QueueStateOpen)
	before := settled(b, metricsAddr)

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
	stop := make(chan struct{})
	// One defer, in this order: Shutdown waits for the informers, which only
	// end once stop is closed (two defers would run the other way round).
	defer func() {
		close(stop)
		inf.Shutdown()
	}()
	inf.Start(stop)
	inf.WaitForCacheSync(stop)

	b.StartTimer()
	start := time.Now()
	parallel(n, func(i int) {
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
	total := time.Since(start)
	b.StopTimer()

	// Wait for every Command to be deleted before counting writes.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		l, err := vc.BusV1alpha1().Commands("default").List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		b.Fatal("Commands not deleted")
	}
	after := settled(b, metricsAddr)

	lat := make([]time.Duration, 0, n)
	for name, t := range closedAt {
		lat = append(lat, t.Sub(created[name]))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(total.Microseconds())/1000, "total-ms")
	state := (after["PATCH"] - before["PATCH"]) + (after["DELETE"] - before["DELETE"])
	events := after["POST"] - before["POST"]
	b.ReportMetric(state/float64(n), "state-writes/close")
	b.ReportMetric(events/float64(n), "event-posts/close")
	b.ReportMetric((state+events+after["PUT"]-before["PUT"])/float64(n), "writes/close")
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

func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
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
	resp, err := http.Get("http://" + addr + "/metrics")
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

func freeAddr(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
