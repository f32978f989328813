package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// BenchmarkSteadyChurn: a serve process watches 100 queues of 10
// podgroups each while podgroup phases flip at a fixed rate (20/s by
// default, round-robin over the queues so each queue changes every 5 s).
// Reported: status lag (phase patch sent -> the queue's status, seen
// on a watch, has the new counts) p50/p99/max, serve's writes per second
// during the churn, and its writes in 10 idle seconds afterwards (should
// be 0: no write when nothing changed).
func BenchmarkSteadyChurn(b *testing.B) {
	const nq, perQueue = 100, 10
	rate := envInt("VC_BENCH_CHURN_RATE", 20)
	dur := time.Duration(envInt("VC_BENCH_CHURN_SECONDS", 30)) * time.Second
	bin := buildBinary(b)
	cp := cptest.Start(b)
	vc := versioned.NewForConfigOrDie(cp.AdminConfig())
	kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	parallel(nq, func(i int) {
		if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%03d", i)}, Spec: v1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	parallel(nq*perQueue, func(i int) {
		if _, err := vc.SchedulingV1beta1().PodGroups("default").Create(ctx, &v1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%04d", i)},
			Spec:       v1beta1.PodGroupSpec{MinMember: 1, Queue: fmt.Sprintf("churn-%03d", i%nq)},
			Status:     v1beta1.PodGroupStatus{Phase: v1beta1.PodGroupPending},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	if b.Failed() {
		return
	}
	health, metrics := freeport.Addr(b), freeport.Addr(b)
	cmd := exec.Command(bin, "serve", "--kubeconfig="+kubeconfig, "--controllers=queue",
		"--health-probe-bind-address="+health, "--metrics-bind-address="+metrics, "--metrics-secure=false")
	logf, _ := os.Create(filepath.Join(b.TempDir(), "serve.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for !queuesMatch(b, vc, churnWant(nq, perQueue, nil)) {
		time.Sleep(200 * time.Millisecond)
	}

	// expected[q] is the Running count the queue must reach; waiters get
	// the time the watch first showed it.
	var mu sync.Mutex
	type waiter struct {
		running int32
		since   time.Time
	}
	waiting := map[string][]waiter{}
	var lags []time.Duration
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := vc.SchedulingV1beta1().Queues().Watch(wctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for ev := range w.ResultChan() {
			q, ok := ev.Object.(*v1beta1.Queue)
			if !ok {
				continue
			}
			now := time.Now()
			mu.Lock()
			ws := waiting[q.Name]
			keep := ws[:0]
			for _, x := range ws {
				if q.Status.Running == x.running && q.Status.Pending == perQueue-x.running {
					lags = append(lags, now.Sub(x.since))
				} else {
					keep = append(keep, x)
				}
			}
			waiting[q.Name] = keep
			mu.Unlock()
		}
	}()

	for range b.N {
		// Settled: the start's StateChanged events (one per queue) are
		// posted asynchronously and must not be counted as churn writes.
		before := settled(b, metrics)
		running := map[string]int32{}
		tick := time.NewTicker(time.Second / time.Duration(rate))
		start := time.Now()
		changes := 0
		for time.Since(start) < dur {
			<-tick.C
			qi := changes % nq
			pg := (changes / nq) % perQueue
			name := fmt.Sprintf("churn-%04d", pg*nq+qi)
			queue := fmt.Sprintf("churn-%03d", qi)
			// Each podgroup flips Pending -> Running on even rounds and
			// back on odd ones.
			phase, delta := v1beta1.PodGroupRunning, int32(1)
			if (changes/(nq*perQueue))%2 == 1 {
				phase, delta = v1beta1.PodGroupPending, -1
			}
			// The waiter is registered before the patch is sent, so a fast
			// status write can never be seen before anyone waits for it;
			// an older status cannot match since the counts differ.
			patch := []byte(`{"status":{"phase":"` + string(phase) + `"}}`)
			mu.Lock()
			running[queue] += delta
			waiting[queue] = append(waiting[queue], waiter{running: running[queue] + initialRunning(queue), since: time.Now()})
			mu.Unlock()
			if _, err := vc.SchedulingV1beta1().PodGroups("default").Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				b.Fatal(err)
			}
			changes++
		}
		tick.Stop()
		churnTime := time.Since(start)
		// Let the last changes land before counting (bounded: a lost watch
		// must not hang the benchmark).
		for settle := time.Now(); time.Since(settle) < 2*time.Minute; {
			mu.Lock()
			pending := 0
			for _, ws := range waiting {
				pending += len(ws)
			}
			mu.Unlock()
			if pending == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		during := settled(b, metrics)
		time.Sleep(10 * time.Second)
		idle := requests(b, metrics)
		writes := func(m map[string]float64) float64 {
			n := 0.0
			for k, v := range m {
				if k != http.MethodGet {
					n += v
				}
			}
			return n
		}
		mu.Lock()
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))] }
		b.ReportMetric(float64(p(0.50).Microseconds())/1000, "ms-lag-p50")
		b.ReportMetric(float64(p(0.99).Microseconds())/1000, "ms-lag-p99")
		b.ReportMetric(float64(lags[len(lags)-1].Microseconds())/1000, "ms-lag-max")
		b.ReportMetric((writes(during)-writes(before))/churnTime.Seconds(), "writes/s")
		b.ReportMetric(float64(changes)/churnTime.Seconds(), "changes/s")
		b.ReportMetric(writes(idle)-writes(during), "idle-writes")
		b.Logf("%d changes in %v, %d lags measured", changes, churnTime.Round(time.Millisecond), len(lags))
		lags = nil
		mu.Unlock()
	}
}

// initialRunning is 0: every podgroup starts Pending. A function so the
// watcher's arithmetic reads as "start + changes".
func initialRunning(string) int32 { return 0 }

func churnWant(nq, perQueue int, _ map[string]int32) map[string]v1beta1.QueueStatus {
	want := map[string]v1beta1.QueueStatus{}
	for i := range nq {
		want[fmt.Sprintf("churn-%03d", i)] = v1beta1.QueueStatus{Pending: int32(perQueue)}
	}
	return want
}
