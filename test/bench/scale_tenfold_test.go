package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// BenchmarkScale runs the same passes at 1× and 10× the cluster of the
// other cold-start benchmarks, each size on its own control plane, serve
// and (with VC_BENCH_VOLCANO_BIN) Volcano's controller manager one after
// the other on the same fixture:
//
//   - queues: 1 000·k queues and 20 000·k podgroups in mixed phases over
//     10 namespaces, nothing else: time until every queue is right, peak
//     RSS and RssAnon, heap, requests (BenchmarkColdStartQueues' measure).
//   - pods: the same after 10 000·k running pods were added, 10 % of them
//     of scheduler "volcano" (already in a group), the rest
//     kube-scheduler's; then, still running, the steady state: an empty
//     queue closed by a Command and 1 000 new pods of "volcano" to group,
//     at once; time to Closed, time until every new pod is in a group, and
//     the writes this took.
//
// The queues pass also runs the cold start's floor (startColdStartFloor:
// the podgroups' queue and phase from Table rows per namespace, the
// queues in one LIST, one status apply per queue, 32 at once, no watch;
// VC_BENCH_SCALE_FLOOR=0 leaves it out): what this API server and
// client-go cost at each size, which no controller can beat.
//
// Every pass runs with the admission policies 'kubectl vc install --serve'
// ships (index mode, the index kept by serve's queue index controller), as
// a user's cluster has them: every podgroup serve makes for a pod pays
// their cost. The floor's writes are status writes, which no index policy
// checks. VC_BENCH_SCALE_ADMISSION=0 leaves the policies out.
//
// VC_BENCH_ROUNDS repeats each pass (the order of the processes
// alternating), and the growth uses the medians. VC_BENCH_SCALE_PASSES limits the passes ("queues", "pods"; both by
// default) or adds "reads" (readPasses: the ways to read every podgroup). VC_BENCH_SCALE_QUEUE_ONLY adds the queue controllers alone. VC_BENCH_BASE_BIN adds a pass of another kubectl-vc binary (an earlier
// commit's, "serve-base") beside serve, to measure a change on one fixture.
// The fixture is created once per size and kept across passes (a pass
// puts back what it changed). VC_BENCH_SCALES lists the sizes ("1,10" by
// default; "0.05" for a quick look); the growth of each figure per object from the smallest to the
// largest size is logged at the end.
func BenchmarkScale(b *testing.B) {
	results := map[string]map[float64][]float64{} // "pass/who metric" -> size -> values
	var mu sync.Mutex
	record := func(key string, k, v float64) {
		mu.Lock()
		defer mu.Unlock()
		if results[key] == nil {
			results[key] = map[float64][]float64{}
		}
		results[key][k] = append(results[key][k], v)
	}
	var sizes []float64
	for _, f := range strings.Split(envOr("VC_BENCH_SCALES", "1,10"), ",") {
		k, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || k <= 0 {
			b.Fatalf("VC_BENCH_SCALES: %q is not a positive factor", f)
		}
		sizes = append(sizes, k)
	}
	for _, k := range sizes {
		b.Run(fmt.Sprintf("%gx", k), func(b *testing.B) { scalePasses(b, k, record) })
	}
	if len(sizes) < 2 {
		return
	}
	lo, hi := sizes[0], sizes[len(sizes)-1]
	for _, key := range slices.Sorted(maps.Keys(results)) {
		byK := results[key]
		a, z := median(byK[lo]), median(byK[hi])
		if a == 0 || z == 0 {
			continue
		}
		// Per object: the figure at the large size over (the figure at the
		// small one × the size ratio); 1.00 is linear. Medians of the rounds.
		b.Logf("growth %gx -> %gx per object: %-40s %.2f (%.3g -> %.3g)", lo, hi, key, z/(a*hi/lo), a, z)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// scaleFixture is one size's cluster.
type scaleFixture struct {
	k          float64
	kube       kubernetes.Interface
	vc         versioned.Interface
	kubeconfig string
	want       map[string]v1beta1.QueueStatus
}

const scaleNamespaces = 10

// steadyQueue is the empty queue the steady state closes.
const steadyQueue = "steady-close"

func scalePasses(b *testing.B, k float64, record func(string, float64, float64)) {
	nq, npg, npods := int(1000*k), int(20000*k), int(10000*k)
	bin := buildBinary(b)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig()
	f := &scaleFixture{k: k, kube: kubernetes.NewForConfigOrDie(cfg), vc: versioned.NewForConfigOrDie(cfg)}
	f.kubeconfig = filepath.Join(b.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(f.kubeconfig, controlplane.AdminUser); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	setup := time.Now()
	nsOf := func(i int) string { return fmt.Sprintf("team-%02d", i%scaleNamespaces) }
	for i := range scaleNamespaces {
		if _, err := f.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsOf(i)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	queueName := func(q int) string { return fmt.Sprintf("cold-%05d", q) }
	parallel(nq+1, func(i int) {
		name := steadyQueue
		if i < nq {
			name = queueName(i)
		}
		if _, err := f.vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1beta1.QueueSpec{Weight: 1, Parent: "root"},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	phaseOf := func(i int) v1beta1.PodGroupPhase { return coldPhases[(i/nq)%len(coldPhases)] }
	createRealisticPodGroupsIn(b, f.vc, npg, nsOf, func(i int) string { return queueName(i % nq) }, phaseOf)
	if b.Failed() {
		return
	}
	b.Logf("fixture: %d queues, %d podgroups in %d namespaces created in %v", nq, npg, scaleNamespaces, time.Since(setup).Round(time.Millisecond))
	f.want = queueStatuses(nq, npg, queueName, phaseOf)
	f.want[steadyQueue] = v1beta1.QueueStatus{State: v1beta1.QueueStateOpen}
	if os.Getenv("VC_BENCH_SCALE_ADMISSION") != "0" {
		// As a user's cluster has it: the policies install ships, in
		// index mode, with serve's queue index controller keeping the index
		// for the whole size (in-process, so that every pass and process
		// meets the same admission); the floor's writes are status writes,
		// which no index policy checks.
		installAdmission(b, f.kubeconfig, cp.AdminConfig())
	}

	launchers := func(round int, floor string) []struct {
		who string
		l   coldLaunch
	} {
		out := []struct {
			who string
			l   coldLaunch
		}{{"serve", serveLaunch(b, bin, f.kubeconfig, nil)}}
		if base := os.Getenv("VC_BENCH_BASE_BIN"); base != "" {
			out = append(out, struct {
				who string
				l   coldLaunch
			}{"serve-base", serveLaunch(b, base, f.kubeconfig, nil)})
		}
		// VC_BENCH_VOLCANO_ROUNDS runs Volcano in the first rounds only:
		// at 10× each of its passes takes about four minutes, and its
		// figures vary little from round to round (docs/benchmarks.md).
		if v := os.Getenv("VC_BENCH_VOLCANO_BIN"); v != "" && round < envInt("VC_BENCH_VOLCANO_ROUNDS", benchRounds()) {
			out = append(out, struct {
				who string
				l   coldLaunch
			}{"volcano", volcanoLaunch(b, v, f.kubeconfig, nil)})
		}
		// VC_BENCH_SCALE_QUEUE_ONLY adds the queue controller alone, of
		// serve ("serve") and of Volcano ("volcano"): what a process that
		// does not group pods pays (serve then reads podgroups as Table
		// rows, plugins/queue watchPodGroups).
		for _, who := range strings.Split(os.Getenv("VC_BENCH_SCALE_QUEUE_ONLY"), ",") {
			switch who {
			case "serve":
				out = append(out, struct {
					who string
					l   coldLaunch
				}{"serve-queue-only", serveLaunchOf(b, bin, f.kubeconfig, nil, "queue")})
			case "volcano":
				if v := os.Getenv("VC_BENCH_VOLCANO_BIN"); v != "" {
					out = append(out, struct {
						who string
						l   coldLaunch
					}{"volcano-queue-only", volcanoLaunchOf(b, v, f.kubeconfig, nil, "queue-controller")})
				}
			}
		}
		if floor != "" && os.Getenv("VC_BENCH_SCALE_FLOOR") != "0" {
			out = append(out, struct {
				who string
				l   coldLaunch
			}{"floor", floorLaunchOf(b, f.kubeconfig, floor)})
		}
		// Odd rounds run in the other order: the first process after the
		// fixture was made has met a busier API server (see
		// docs/benchmarks.md).
		if round%2 == 1 {
			slices.Reverse(out)
		}
		return out
	}
	_, apiserver := cp.Pids()
	if strings.Contains(envOr("VC_BENCH_SCALE_PASSES", "queues,pods"), "reads") {
		readPasses(b, f, apiserver, record)
	}
	rounds := benchRounds()
	for r := range rounds {
		if !strings.Contains(envOr("VC_BENCH_SCALE_PASSES", "queues,pods"), "queues") {
			break
		}
		for _, x := range launchers(r, "coldstart") {
			b.Run("queues/"+x.who, func(b *testing.B) {
				clearQueueStatuses(b, f.vc, f.want)
				w := watchQueues(b, f.vc, f.want)
				defer w.stop()
				b.ResetTimer()
				apiBefore := procCPU(apiserver)
				m := launch(b, x.l)
				elapsed := m.untilCorrect(b, w)
				b.StopTimer()
				cpu := m.cpuUntilNow(apiserver, apiBefore)
				st := m.stop(b)
				st.report(b, elapsed, fmt.Sprintf("%gx queues %s", k, x.who))
				st.record(record, "queues/"+x.who, k, elapsed)
				cpu.report(b, record, "queues/"+x.who, k, float64(npg)/1000, "1000-podgroups")
			})
		}
	}

	if !strings.Contains(envOr("VC_BENCH_SCALE_PASSES", "queues,pods"), "pods") {
		return
	}
	setup = time.Now()
	// Pod i is in namespace i%10; one in ten is Volcano's and a member of
	// an existing group of its namespace, so neither controller has work
	// to do for it: what they pay for the pods is their caches.
	createRealisticPods(b, f.kube, npods, func(i int, p *corev1.Pod) {
		p.Namespace = nsOf(i)
		if i%10 == 0 {
			p.Annotations[keys.KubeGroupName] = fmt.Sprintf("pg-%05d", (i/10)%(npg/scaleNamespaces)*scaleNamespaces+i%scaleNamespaces)
		} else {
			p.Spec.SchedulerName = corev1.DefaultSchedulerName
		}
	})
	if b.Failed() {
		return
	}
	b.Logf("fixture: %d pods (%d of scheduler volcano) created in %v", npods, npods/10, time.Since(setup).Round(time.Millisecond))
	for r := range rounds {
		for _, x := range launchers(r, "pods") {
			b.Run("pods/"+x.who, func(b *testing.B) {
				clearQueueStatuses(b, f.vc, f.want)
				w := watchQueues(b, f.vc, f.want)
				defer w.stop()
				b.ResetTimer()
				apiBefore := procCPU(apiserver)
				m := launch(b, x.l)
				elapsed := m.untilCorrect(b, w)
				b.StopTimer()
				coldCPU := m.cpuUntilNow(apiserver, apiBefore)
				// The cold start's figures are taken before the steady state
				// adds its pods; the live heap comes from the GC trace at the end.
				cold := m.now(b)
				steadyBefore := m.cpuUntilNow(apiserver, 0)
				closeTime, groupTime := f.steady(b)
				steadyCPU := m.cpuUntilNow(apiserver, 0).since(steadyBefore)
				st := m.stop(b)
				coldCPU.report(b, record, "pods/"+x.who, k, float64(npg)/1000, "1000-podgroups")
				steadyCPU.report(b, record, "steady/"+x.who, k, 1, "1000-pods")
				after := st.reqs
				cold.live, cold.peakHeap = st.live, st.peakHeap
				cold.report(b, elapsed, fmt.Sprintf("%gx pods %s", k, x.who))
				cold.record(record, "pods/"+x.who, k, elapsed)
				before := cold.reqs
				b.ReportMetric(float64(st.hwm)/1024, "MiB-peak-RSS-after-steady")
				writes := 0.0
				for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
					writes += after[method] - before[method]
				}
				b.ReportMetric(closeTime.Seconds(), "s-steady-close")
				b.ReportMetric(groupTime.Seconds(), "s-steady-group-1000")
				b.ReportMetric(writes, "steady-writes")
				b.Logf("%gx steady %s: queue Closed %v after its Command, 1 000 new pods grouped in %v, %.0f writes",
					k, x.who, closeTime.Round(time.Millisecond), groupTime.Round(time.Millisecond), writes)
				record("steady/"+x.who+" s-group-1000", k, groupTime.Seconds())
			})
		}
	}
}

// cpuUsed is the CPU a pass took: the measured process's and the API
// server's (user and system, from /proc).
type cpuUsed struct{ self, apiserver time.Duration }

// cpuUntilNow is the CPU m has used since it started, and the API server's
// since it had used apiBefore.
func (m *measured) cpuUntilNow(apiserver int, apiBefore time.Duration) cpuUsed {
	return cpuUsed{self: procCPU(m.cmd.Process.Pid), apiserver: procCPU(apiserver) - apiBefore}
}

// since is the CPU used from before to u.
func (u cpuUsed) since(before cpuUsed) cpuUsed {
	return cpuUsed{self: u.self - before.self, apiserver: u.apiserver - before.apiserver}
}

// report reports and records u, and u per unit of work (per, in units
// named unit: 1 000 podgroups, 1 000 pods).
func (u cpuUsed) report(b *testing.B, record func(string, float64, float64), pass string, k, per float64, unit string) {
	b.ReportMetric(u.self.Seconds(), "s-cpu")
	b.ReportMetric(u.apiserver.Seconds(), "s-apiserver-cpu")
	b.ReportMetric(u.self.Seconds()/per, "s-cpu-per-"+unit)
	b.Logf("%gx %s: CPU %.2f s (%.3f s per %s), API server CPU %.2f s (%.3f s per %s)", k, pass,
		u.self.Seconds(), u.self.Seconds()/per, unit, u.apiserver.Seconds(), u.apiserver.Seconds()/per, unit)
	record(pass+" s-cpu", k, u.self.Seconds())
	record(pass+" s-apiserver-cpu", k, u.apiserver.Seconds())
}

// record keeps a pass's figures for the growth report.
func (st processStats) record(record func(string, float64, float64), pass string, k float64, elapsed time.Duration) {
	record(pass+" s-to-correct", k, elapsed.Seconds())
	record(pass+" MiB-peak-RSS", k, float64(st.hwm)/1024)
	record(pass+" MiB-peak-RssAnon", k, float64(st.anonPeak)/1024)
	record(pass+" requests", k, st.total())
}

// steady closes the empty steadyQueue with a Command while 32 clients
// create 1 000 bare pods of scheduler volcano in team-00, and returns the
// time from the Command to the queue Closed and from the first pod to the
// last one in a group. It then deletes the pods and their groups; the
// queue is opened again by the next pass (which clears the statuses).
func (f *scaleFixture) steady(b *testing.B) (closeTime, groupTime time.Duration) {
	ctx := context.Background()
	const n, ns = 1000, "team-00"
	batch := rand.String(6)
	grouped := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]bool{}
	inf := kubeinformers.NewSharedInformerFactoryWithOptions(f.kube, 0, kubeinformers.WithNamespace(ns),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "bench-batch=" + batch }))
	check := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Annotations[keys.KubeGroupName] == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !seen[p.Name] {
			seen[p.Name] = true
			if len(seen) == n {
				close(grouped)
			}
		}
	}
	_, _ = inf.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: check, UpdateFunc: func(_, obj any) { check(obj) }})
	stop := make(chan struct{})
	inf.Start(stop)
	inf.WaitForCacheSync(stop)
	defer func() { close(stop); inf.Shutdown() }()

	q, err := f.vc.SchedulingV1beta1().Queues().Get(ctx, steadyQueue, metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		ref := metav1.NewControllerRef(q, v1beta1.SchemeGroupVersion.WithKind("Queue"))
		if _, err := f.vc.BusV1alpha1().Commands("default").Create(ctx, &busv1alpha1.Command{
			ObjectMeta: metav1.ObjectMeta{GenerateName: steadyQueue + "-closequeue-", OwnerReferences: []metav1.OwnerReference{*ref}},
			Action:     busv1alpha1.CloseQueueAction, TargetObject: ref,
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
			closed <- 0
			return
		}
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
			q, err := f.vc.SchedulingV1beta1().Queues().Get(ctx, steadyQueue, metav1.GetOptions{})
			return err == nil && q.Status.State == v1beta1.QueueStateClosed, nil
		})
		if err != nil {
			b.Error("the steady queue did not close in 5 minutes")
		}
		closed <- time.Since(start)
	}()
	parallel(n, func(i int) {
		p := realisticPod(i)
		p.Name = fmt.Sprintf("new-%s-%04d", batch, i)
		p.Labels["bench-batch"] = batch
		if _, err := f.kube.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	select {
	case <-grouped:
		groupTime = time.Since(start)
	case <-time.After(10 * time.Minute):
		b.Fatal("the 1 000 new pods were not all grouped in 10 minutes")
	}
	closeTime = <-closed

	// Put back what the pass changed: the pods, their groups (no garbage
	// collector runs at this level) and any Command left.
	pods, err := f.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "bench-batch=" + batch})
	if err != nil {
		b.Fatal(err)
	}
	parallel(len(pods.Items), func(i int) {
		p := pods.Items[i]
		if err := f.vc.SchedulingV1beta1().PodGroups(ns).Delete(ctx, p.Annotations[keys.KubeGroupName], metav1.DeleteOptions{}); err != nil {
			b.Error(err)
		}
	})
	if err := f.kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
		metav1.ListOptions{LabelSelector: "bench-batch=" + batch}); err != nil {
		b.Fatal(err)
	}
	if err := f.vc.BusV1alpha1().Commands("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		b.Fatal(err)
	}
	return closeTime, groupTime
}
