package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	schedulingac "github.com/kubectl-vc/kubectl-vc/pkg/client/applyconfiguration/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/podgrouprows"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
)

// startColdStartFloor is the floor of a cold start: what any controller
// that keeps queue statuses must do, and nothing more, read the cheapest
// way this API server offers. It reads every podgroup's queue and phase
// from server-side Tables without the objects, one per namespace
// (podgrouprows, as serve's queue controller reads them when it runs
// alone, the cheapest read of BenchmarkScale's reads pass: docs/benchmarks.md),
// and the queues
// with one consistent LIST; it keeps no watch open, counts the
// podgroups of each queue by phase, and applies each queue's status (state
// Open and the counts) where it differs, floorConcurrency at once. No
// trimming, no hierarchy, no events, no metrics: the time it takes is what
// the API server and client-go cost on this machine at this size, which
// no controller can beat.
func startColdStartFloor(t testing.TB, cfg *rest.Config) (stop func()) {
	vc := versioned.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	lw, ok := podgrouprows.New(kubernetes.NewForConfigOrDie(cfg), vc)
	if !ok {
		t.Fatal("floor: no REST client for Tables")
	}
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, ok := list.(*podgrouprows.RowList)
	if !ok {
		t.Fatalf("floor: podgroups read as %T, not as Table rows", list)
	}
	counts := map[string]rules.PodGroupCounts{}
	for _, r := range rows.Items {
		c := counts[r.Queue]
		c.Add(r.Phase)
		counts[r.Queue] = c
	}
	// A consistent list (no resourceVersion): the statuses the benchmark
	// has just cleared must be seen cleared. Kubernetes 1.31 and later
	// serve it from the watch cache as fast as resourceVersion=0.
	ql, err := vc.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	qs := ql.Items
	type item struct {
		name string
		n    rules.PodGroupCounts
	}
	items := make(chan item, len(qs))
	for i := range qs {
		q := &qs[i]
		n := counts[q.Name]
		if q.Status.State != v1beta1.QueueStateOpen || !n.SamePhases(rules.FromQueueStatus(q.Status)) {
			items <- item{q.Name, n}
		}
	}
	done := floorWorkers(ctx, items, func(ctx context.Context, it item) error {
		ac := schedulingac.Queue(it.name).WithStatus(schedulingac.QueueStatus().WithState(v1beta1.QueueStateOpen).
			WithInqueue(it.n.Inqueue).WithPending(it.n.Pending).WithRunning(it.n.Running).
			WithUnknown(it.n.Unknown).WithCompleted(it.n.Completed))
		_, err := vc.SchedulingV1beta1().Queues().ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: keys.QueueControllerManager, Force: true})
		return err
	})
	return func() {
		cancel()
		if err := done(); err != nil {
			t.Error("floor:", err)
		}
	}
}

// floorLaunch runs the cold-start floor as a process of its own (this test
// binary's TestFloorProcess), measured like serve and Volcano: its
// requests are served on its metrics address in the format of client-go's
// rest_client_requests_total.
func floorLaunch(b *testing.B, kubeconfig string) coldLaunch {
	return floorLaunchOf(b, kubeconfig, "coldstart")
}

// floorLaunchOf launches the floor process of kind (TestFloorProcess).
func floorLaunchOf(b *testing.B, kubeconfig, kind string) coldLaunch {
	l := coldLaunch{bin: os.Args[0], metrics: freeport.Addr(b)}
	l.args = []string{"-test.run=^TestFloorProcess$", "-test.count=1"}
	l.env = []string{"VC_BENCH_FLOOR_PROCESS=" + kind, "VC_BENCH_FLOOR_KUBECONFIG=" + kubeconfig,
		"VC_BENCH_FLOOR_METRICS=" + l.metrics}
	return l
}

// serveFloorMetrics serves c's counts at addr as rest_client_requests_total.
func serveFloorMetrics(t testing.TB, addr string, c *methodCounter) {
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		for m, n := range c.snapshot() {
			fmt.Fprintf(w, "rest_client_requests_total{code=\"200\",host=\"floor\",method=%q} %g\n", m, n)
		}
	})
	go func() {
		if err := http.ListenAndServe(addr, mux); err != nil {
			t.Error(err)
		}
	}()
}
