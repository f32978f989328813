package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Sizes of the cold start; override with VC_BENCH_QUEUES / VC_BENCH_PODGROUPS
// to scale down on a small machine (docs/benchmarks.md says which ran).
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// buildBinary builds kubectl-vc once per benchmark: serve must run as its
// own process for its peak RSS to mean anything. VC_BENCH_BIN names a
// binary to use instead, e.g. one built from an older commit to measure
// "before" against "after" on the same fixture.
func buildBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("VC_BENCH_BIN"); bin != "" {
		return bin
	}
	bin, err := cptest.BuildBinary(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

var coldPhases = []v1beta1.PodGroupPhase{
	v1beta1.PodGroupPending, v1beta1.PodGroupRunning, v1beta1.PodGroupInqueue,
	v1beta1.PodGroupCompleted, v1beta1.PodGroupUnknown,
}

// BenchmarkColdStart: 1 000 queues and 20 000 podgroups in mixed phases
// exist before serve starts (as after an upgrade or a failover), next to
// 5 000 running pods that already have their groups and 1 000 ReplicaSets
// of other workloads (both cached by the podgroup controller). Measured:
// the time from starting the serve process until every queue's status
// counts are right, serve's peak RSS (VmHWM) at that moment, and the API
// requests serve made by method (its own rest_client_requests_total).
// VC_BENCH_QUEUES, VC_BENCH_PODGROUPS, VC_BENCH_COLD_PODS and
// VC_BENCH_COLD_REPLICASETS change the sizes.
func BenchmarkColdStart(b *testing.B) {
	nq, npg := envInt("VC_BENCH_QUEUES", 1000), envInt("VC_BENCH_PODGROUPS", 20000)
	npods, nrs := envInt("VC_BENCH_COLD_PODS", 5000), envInt("VC_BENCH_COLD_REPLICASETS", 1000)
	bin := buildBinary(b)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig() // QPS -1: creating the fixture fast is not what is measured
	vc := versioned.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	setup := time.Now()
	parallel(nq, func(i int) {
		if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cold-%04d", i)},
			Spec:       v1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	queueName := func(q int) string { return fmt.Sprintf("cold-%04d", q) }
	phaseOf := func(i int) v1beta1.PodGroupPhase { return coldPhases[(i/nq)%len(coldPhases)] }
	createRealisticPodGroups(b, vc, npg, func(i int) string { return queueName(i % nq) }, phaseOf)
	// The pods are members of existing groups, so the podgroup controller
	// only caches them.
	createRealisticPods(b, kube, npods, func(i int, p *corev1.Pod) {
		p.Annotations[keys.KubeGroupName] = fmt.Sprintf("pg-%05d", i%npg)
	})
	createRealisticReplicaSets(b, kube, nrs)
	if b.Failed() {
		return
	}
	b.Logf("fixture: %d queues, %d podgroups, %d pods, %d ReplicaSets created in %v", nq, npg, npods, nrs, time.Since(setup).Round(time.Millisecond))
	want := queueStatuses(nq, npg, queueName, phaseOf)

	for range b.N {
		coldStart(b, serveLaunch(b, bin, kubeconfig, nil), vc, want, fmt.Sprintf("queues=%d podgroups=%d", nq, npg))
	}
}

// BenchmarkColdStartQueues is issue 19's cold start: 1 000 queues (parent
// root, no state yet) and 20 000 podgroups in mixed phases spread over 10
// namespaces, and nothing else: no pods, no workloads. It measures what
// the queue and podgroup caches cost alone. VC_BENCH_QUEUES and
// VC_BENCH_PODGROUPS change the sizes.
func BenchmarkColdStartQueues(b *testing.B) {
	nq, npg := envInt("VC_BENCH_QUEUES", 1000), envInt("VC_BENCH_PODGROUPS", 20000)
	const namespaces = 10
	bin := buildBinary(b)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig()
	vc := versioned.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, controlplane.AdminUser); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	setup := time.Now()
	for i := range namespaces {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("team-%02d", i)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	queueName := func(q int) string { return fmt.Sprintf("cold-%04d", q) }
	parallel(nq, func(i int) {
		if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: queueName(i)},
			Spec:       v1beta1.QueueSpec{Weight: 1, Parent: "root"},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	phaseOf := func(i int) v1beta1.PodGroupPhase { return coldPhases[(i/nq)%len(coldPhases)] }
	createRealisticPodGroupsIn(b, vc, npg, func(i int) string { return fmt.Sprintf("team-%02d", i%namespaces) },
		func(i int) string { return queueName(i % nq) }, phaseOf)
	if b.Failed() {
		return
	}
	b.Logf("fixture: %d queues, %d podgroups in %d namespaces created in %v", nq, npg, namespaces, time.Since(setup).Round(time.Millisecond))
	want := queueStatuses(nq, npg, queueName, phaseOf)
	volcano := os.Getenv("VC_BENCH_VOLCANO_BIN")
	for range b.N {
		for _, env := range coldEnvs() {
			what := fmt.Sprintf("queues=%d podgroups=%d namespaces=%d", nq, npg, namespaces)
			coldStart(b, serveLaunch(b, bin, kubeconfig, env), vc, want, what+" serve "+strings.Join(env, " "))
			if volcano != "" {
				coldStart(b, volcanoLaunch(b, volcano, kubeconfig, env), vc, want, what+" volcano "+strings.Join(env, " "))
			}
		}
	}
}

// coldLaunch is how coldStart starts the controllers it measures.
type coldLaunch struct {
	bin  string
	args []string
	env  []string
	// metrics is the address of the process's Prometheus metrics
	// (rest_client_requests_total, both have it), and of serve's heap
	// profile with --profiling.
	metrics string
	// heapFile, if set, receives serve's heap profile.
	heapFile string
	// cpuFile, if set, receives serve's CPU profile of its first
	// VC_BENCH_COLD_CPU_SECONDS (30 by default).
	cpuFile string
	// countsInMetrics: the controllers write only the state to a queue's
	// status and its podgroup counts to their metrics, as Volcano's queue
	// controller does since it stopped writing them to the status.
	countsInMetrics bool
}

// serveLaunch is 'serve --controllers=queue,podgroup' with env added to
// the benchmark's environment. VC_BENCH_COLD_HEAP=FILE saves serve's heap
// profile, taken once every status is right, to FILE (go tool pprof
// -sample_index=inuse_space).
func serveLaunch(b *testing.B, bin, kubeconfig string, env []string) coldLaunch {
	return serveLaunchOf(b, bin, kubeconfig, env, "queue,podgroup")
}

// serveLaunchOf is serveLaunch with other --controllers.
func serveLaunchOf(b *testing.B, bin, kubeconfig string, env []string, controllers string) coldLaunch {
	l := coldLaunch{bin: bin, env: env, metrics: freeport.Addr(b), heapFile: os.Getenv("VC_BENCH_COLD_HEAP")}
	l.args = []string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=" + controllers,
		"--health-probe-bind-address=" + freeport.Addr(b), "--metrics-bind-address=" + l.metrics,
		// The harness reads the metrics over plain HTTP, as Volcano's
		// controller serves them.
		"--metrics-secure=false"}
	// VC_BENCH_SERVE_ARGS adds flags to serve (space-separated), e.g.
	// --workers-queue=64 to size a default from measurement.
	l.args = append(l.args, strings.Fields(os.Getenv("VC_BENCH_SERVE_ARGS"))...)
	l.cpuFile = os.Getenv("VC_BENCH_COLD_CPU")
	if l.heapFile != "" || l.cpuFile != "" {
		// serve serves its profiles only over HTTPS behind the API
		// server's checks: its metrics and profiles are read with the
		// token of a ServiceAccount granted them (fetch).
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			b.Fatal(err)
		}
		secureMetrics.Store(l.metrics, cptest.ProfilerToken(b, kubernetes.NewForConfigOrDie(cfg)))
		l.args = append(l.args, "--metrics-secure=true", "--profiling")
	}
	return l
}

// secureMetrics holds, by metrics address, the token of a serve started
// with --profiling, whose metrics and profiles are served over HTTPS.
var secureMetrics sync.Map

// fetch GETs path from a controller's metrics address: over HTTPS with
// the token secureMetrics holds for it, else over plain HTTP.
func fetch(addr, path string) (*http.Response, error) {
	if token, ok := secureMetrics.Load(addr); ok {
		return cptest.FetchSecure(context.Background(), addr, token.(string), path)
	}
	return http.Get("http://" + addr + path)
}

// volcanoLaunch is Volcano's controller manager with the same two
// controllers (VC_BENCH_VOLCANO_BIN: a vc-controller-manager built from
// volcano-sh/volcano, see docs/benchmarks.md), for the comparison issue 19
// asks for: same fixture, same machine, same measurements.
// VC_BENCH_VOLCANO_CONTROLLERS replaces its --controllers.
func volcanoLaunch(b *testing.B, bin, kubeconfig string, env []string) coldLaunch {
	controllers := "queue-controller,pg-controller" // serve's queue,podgroup
	if c := os.Getenv("VC_BENCH_VOLCANO_CONTROLLERS"); c != "" {
		controllers = c
	}
	return volcanoLaunchOf(b, bin, kubeconfig, env, controllers)
}

// volcanoLaunchOf is volcanoLaunch with other --controllers.
func volcanoLaunchOf(b *testing.B, bin, kubeconfig string, env []string, controllers string) coldLaunch {
	l := coldLaunch{bin: bin, env: env, metrics: freeport.Addr(b), countsInMetrics: true}
	l.args = []string{"--kubeconfig=" + kubeconfig, "--controllers=" + controllers,
		"--leader-elect=false", "--enable-metrics", "--listen-address=" + l.metrics}
	return l
}

// coldEnvs are the environments BenchmarkColdStartQueues starts serve in,
// one after the other on the same fixture: VC_BENCH_COLD_ENV separates
// them with ';' (e.g. "GOGC=100;GOGC=50" to weigh the garbage collector's
// headroom against time); unset, serve's own environment only.
func coldEnvs() [][]string {
	var envs [][]string
	for _, e := range strings.Split(os.Getenv("VC_BENCH_COLD_ENV"), ";") {
		envs = append(envs, strings.Fields(e))
	}
	return envs
}

// coldStart starts the controllers l describes as their own process, with
// every queue status cleared first, and measures the time until every
// queue's status is want, its peak RSS at that moment, its heap from the GC
// trace, and its requests by method.
func coldStart(b *testing.B, l coldLaunch, vc versioned.Interface, want map[string]v1beta1.QueueStatus, what string) {
	clearQueueStatuses(b, vc, want)
	w := watchQueues(b, vc, want)
	defer w.stop()
	b.ResetTimer()
	m := launch(b, l)
	elapsed := m.untilCorrect(b, w)
	b.StopTimer()
	m.stop(b).report(b, elapsed, what)
}

// clearQueueStatuses removes the status of every queue in want: a run
// before this one left them right, and the next must have the same work
// to do as the first.
func clearQueueStatuses(b *testing.B, vc versioned.Interface, want map[string]v1beta1.QueueStatus) {
	names := slices.Collect(maps.Keys(want))
	parallel(len(names), func(i int) {
		if _, err := vc.SchedulingV1beta1().Queues().Patch(context.Background(), names[i], types.MergePatchType,
			[]byte(`{"status":null}`), metav1.PatchOptions{}, "status"); err != nil {
			b.Error(err)
		}
	})
	if b.Failed() || queuesMatch(b, vc, want) {
		b.Fatal("queue statuses not cleared before the start")
	}
}

// measured is a controller process under measurement: its log (with the
// Go runtime's GC trace) and a sampler of its anonymous memory.
type measured struct {
	l            coldLaunch
	cmd          *exec.Cmd
	logf         *os.File
	start        time.Time
	stopSampling chan struct{}
	sampled      chan struct{}
	anonPeak     atomic.Int64 // KiB
}

// launch starts l's process, with env added to the benchmark's
// environment, and samples its memory until stop.
func launch(b *testing.B, l coldLaunch) *measured {
	m := &measured{l: l, cmd: exec.Command(l.bin, l.args...), stopSampling: make(chan struct{}), sampled: make(chan struct{})}
	// VC_BENCH_LOG_DIR keeps the processes' logs (klog with timestamps,
	// GC trace) after the benchmark, one file per start.
	dir := os.Getenv("VC_BENCH_LOG_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	var err error
	if m.logf, err = os.CreateTemp(dir, strings.ReplaceAll(b.Name(), "/", "_")+"-*.log"); err != nil {
		b.Fatal(err)
	}
	m.cmd.Stdout, m.cmd.Stderr = m.logf, m.logf
	// The Go runtime's GC trace tells the live heap after each
	// collection, which RSS (heap goal, runtime, binary) only hints at.
	m.cmd.Env = append(append(os.Environ(), "GODEBUG=gctrace=1"), l.env...)
	m.start = time.Now()
	if err := m.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if l.cpuFile != "" {
		go saveCPUProfile(b, l.metrics, l.cpuFile, envInt("VC_BENCH_COLD_CPU_SECONDS", 30))
	}
	// VmHWM counts the binary's pages too (RssFile), which depend on how
	// the kernel holds the file in its page cache, so they vary between
	// runs of the same binary (docs/benchmarks.md). The process's own
	// memory (RssAnon) has
	// no high-water mark in /proc, so it is sampled.
	go func() {
		defer close(m.sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := procField(m.cmd.Process.Pid, "RssAnon:"); v > m.anonPeak.Load() {
				m.anonPeak.Store(v)
			}
			select {
			case <-m.stopSampling:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// untilCorrect waits until w sees every queue's status as want (for a
// process with countsInMetrics: every queue Open, and want's counts in its
// metrics, scraped at most once a second) and returns the time since the
// start.
func (m *measured) untilCorrect(b *testing.B, w *queueWatch) time.Duration {
	var scraped time.Time
	for {
		if w.allRight() {
			return time.Since(m.start)
		}
		if m.l.countsInMetrics && w.allOpen() && time.Since(scraped) >= time.Second {
			scraped = time.Now()
			if metricCountsMatch(m.l.metrics, w.want) {
				return time.Since(m.start)
			}
		}
		if time.Since(m.start) > 20*time.Minute {
			_ = m.cmd.Process.Kill()
			_ = m.cmd.Wait()
			b.Fatal("queue statuses not right after 20 minutes")
		}
		w.wait(250 * time.Millisecond)
	}
}

// processStats is what a measured process used.
type processStats struct {
	hwm, rss, anonPeak int64 // KiB
	live, peakHeap     float64
	reqs               map[string]float64
}

// stop ends the sampling, reads the process's requests (once they
// settle) and memory, and kills it.
func (m *measured) stop(b *testing.B) processStats {
	close(m.stopSampling)
	<-m.sampled
	st := processStats{anonPeak: m.anonPeak.Load()}
	if m.l.heapFile != "" {
		saveHeapProfile(b, m.l.metrics, m.l.heapFile)
	}
	st.reqs = settled(b, m.l.metrics)
	st.hwm, st.rss = procMemory(b, m.cmd.Process.Pid)
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", m.cmd.Process.Pid)); err == nil {
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "Rss") {
				b.Log(l)
			}
		}
	}
	_ = m.cmd.Process.Kill()
	_ = m.cmd.Wait()
	m.logf.Close()
	st.live, st.peakHeap = gcHeap(b, m.logf.Name())
	return st
}

// now is what the process has used so far, its requests settled (for a
// pass that goes on after the cold start).
func (m *measured) now(b *testing.B) processStats {
	st := processStats{anonPeak: m.anonPeak.Load(), reqs: settled(b, m.l.metrics)}
	st.hwm, st.rss = procMemory(b, m.cmd.Process.Pid)
	return st
}

// writes are the requests other than GETs.
func (st processStats) writes() float64 {
	w := 0.0
	for m, v := range st.reqs {
		if m != http.MethodGet {
			w += v
		}
	}
	return w
}

func (st processStats) total() float64 {
	t := 0.0
	for _, v := range st.reqs {
		t += v
	}
	return t
}

// report reports a cold start that took elapsed.
func (st processStats) report(b *testing.B, elapsed time.Duration, what string) {
	b.ReportMetric(elapsed.Seconds(), "s-to-correct")
	b.ReportMetric(st.live, "MiB-live-heap")
	b.ReportMetric(st.peakHeap, "MiB-peak-heap")
	b.ReportMetric(float64(st.hwm)/1024, "MiB-peak-RSS")
	b.ReportMetric(float64(st.rss)/1024, "MiB-RSS")
	b.ReportMetric(float64(st.anonPeak)/1024, "MiB-peak-RssAnon")
	b.ReportMetric(st.total(), "requests")
	b.ReportMetric(st.writes(), "writes")
	b.Logf("%s: correct after %v, VmHWM %d KiB, VmRSS %d KiB, largest RssAnon sampled %d KiB, live heap after the last GC %.0f MiB, largest heap %.0f MiB, requests by method %v",
		what, elapsed.Round(time.Millisecond), st.hwm, st.rss, st.anonPeak, st.live, st.peakHeap, st.reqs)
}

// queueStatuses is the status serve gives each of nq queues, named
// name(q), when podgroup i of npg is in queue i%nq with phase phaseOf(i):
// Open, with the podgroups counted by phase.
func queueStatuses(nq, npg int, name func(q int) string, phaseOf func(i int) v1beta1.PodGroupPhase) map[string]v1beta1.QueueStatus {
	want := make(map[string]v1beta1.QueueStatus, nq)
	for q := range nq {
		want[name(q)] = v1beta1.QueueStatus{State: v1beta1.QueueStateOpen}
	}
	for i := range npg {
		s := want[name(i%nq)]
		switch phaseOf(i) {
		case v1beta1.PodGroupPending:
			s.Pending++
		case v1beta1.PodGroupRunning:
			s.Running++
		case v1beta1.PodGroupInqueue:
			s.Inqueue++
		case v1beta1.PodGroupCompleted:
			s.Completed++
		case v1beta1.PodGroupUnknown:
			s.Unknown++
		}
		want[name(i%nq)] = s
	}
	return want
}

func queuesMatch(b *testing.B, vc versioned.Interface, want map[string]v1beta1.QueueStatus) bool {
	list, err := vc.SchedulingV1beta1().Queues().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return false
	}
	ok := 0
	for _, q := range list.Items {
		w, mine := want[q.Name]
		if !mine {
			continue
		}
		s := q.Status
		if s.Pending == w.Pending && s.Running == w.Running && s.Inqueue == w.Inqueue &&
			s.Completed == w.Completed && s.Unknown == w.Unknown {
			ok++
		}
	}
	return ok == len(want)
}

// queueCountSeries matches a queue's podgroup count in Volcano's metric
// names (serve exports the same): phase, queue, value.
var queueCountSeries = regexp.MustCompile(`^volcano_queue_pod_group_(\w+)_count\{.*queue_name="([^"]+)".*\} (\S+)$`)

// metricCountsMatch tells whether the metrics at addr show want's
// podgroup counts for every queue in want.
func metricCountsMatch(addr string, want map[string]v1beta1.QueueStatus) bool {
	resp, err := fetch(addr, "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	got := map[string]*v1beta1.QueueStatus{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := queueCountSeries.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			return false
		}
		st := got[m[2]]
		if st == nil {
			st = &v1beta1.QueueStatus{}
			got[m[2]] = st
		}
		switch m[1] {
		case "pending":
			st.Pending = int32(v)
		case "running":
			st.Running = int32(v)
		case "inqueue":
			st.Inqueue = int32(v)
		case "completed":
			st.Completed = int32(v)
		case "unknown":
			st.Unknown = int32(v)
		}
	}
	for name, w := range want {
		g := got[name]
		if g == nil || g.Pending != w.Pending || g.Running != w.Running || g.Inqueue != w.Inqueue ||
			g.Completed != w.Completed || g.Unknown != w.Unknown {
			return false
		}
	}
	return true
}

// procMemory reads a process's peak and current resident set (KiB).
func procMemory(b *testing.B, pid int) (hwm, rss int64) {
	hwm, rss = procField(pid, "VmHWM:"), procField(pid, "VmRSS:")
	if hwm == 0 {
		b.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	return hwm, rss
}

// saveHeapProfile saves the heap profile of the serve whose metrics (and,
// with --profiling, pprof) address is addr to file.
func saveHeapProfile(b *testing.B, addr, file string) {
	resp, err := fetch(addr, "/debug/pprof/heap")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("heap profile: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Fatal(err)
	}
	b.Logf("heap profile saved to %s", file)
}

// saveCPUProfile saves a CPU profile of the serve whose pprof address is
// addr, taken over its first seconds, to file (go tool pprof).
func saveCPUProfile(b *testing.B, addr, file string, seconds int) {
	path := fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds)
	var resp *http.Response
	var err error
	for range 100 { // until serve listens
		if resp, err = fetch(addr, path); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		b.Error(err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("CPU profile: %s", resp.Status)
		return
	}
	f, err := os.Create(file)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Error(err)
	}
	b.Logf("CPU profile saved to %s", file)
}

// procField reads one field of /proc/PID/status in KiB (0 if the process
// is gone or has no such field).
func procField(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// gcTrace matches the heap sizes of a GODEBUG=gctrace=1 line: heap at GC
// start, at GC end, and live (marked) heap, in MiB ("MB" in Go's trace).
var gcTrace = regexp.MustCompile(`^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// gcHeap reads serve's GC trace: the live heap after its last collection
// and the largest heap it reached.
func gcHeap(b *testing.B, log string) (live, peak float64) {
	data, err := os.ReadFile(log)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := gcTrace.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		for _, v := range m[1:3] {
			f, _ := strconv.ParseFloat(v, 64)
			peak = max(peak, f)
		}
		live, _ = strconv.ParseFloat(m[3], 64)
	}
	if n == 0 {
		b.Fatal("no GC trace in serve's log")
	}
	return live, peak
}
