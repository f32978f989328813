package hostile

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/queues"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
)

// The requirements (issue 42, Deliver 2).
const (
	// MaxGrowth bounds serve's peak resident memory over its idle one.
	MaxGrowth = 256 << 20
	// CloseDeadline bounds the time from a queue close being issued (its
	// Command created) to the queue's status showing it applied.
	CloseDeadline = 5 * time.Second
)

// waitFor bounds the waits for what serve does with a hostile object. It
// only bounds a broken run: the slowest thing waited for is serve's
// slurmrestd client giving up on an answer that never ends, after its
// 30 s request timeout (slurm.RESTConfig), plus the retry backoff the
// NodeSet controller caps at its 30 s resync, plus a stall of the loaded
// machine.
const waitFor = 2 * time.Minute

// serve is a running 'kubectl-vc serve' with all three controllers and
// what a run measures of it.
type serve struct {
	*cptest.Serve
	pid  int
	idle int64 // VmRSS once started, its caches synced, in bytes
}

// startServe runs serve with the three controllers and the given extra
// flags (how the NodeSet controller reaches Slurm), waits until its queue
// controller has synced a queue created now, and reads its idle RSS.
func startServe(t *testing.T, args ...string) *serve {
	t.Helper()
	args = append([]string{"--controllers=queue,podgroup,nodeset"}, args...)
	var p *cptest.Serve
	if diagDir() != "" {
		p = cptest.StartProfiledServe(t, env.binary, env.kubeconfig, env.kube, args...)
	} else {
		// Metrics over HTTPS behind the reviews, as deployed (the
		// metrics row floods them).
		p = cptest.StartServe(t, env.binary, env.kubeconfig, append(args, "--metrics-secure=true")...)
	}
	s := &serve{Serve: p, pid: pidOf(t, p)}
	// The queue controller syncs only once every cache it reads has
	// synced: a queue made Open proves it.
	q := queues.Create(t, env.vc, runName("idle"), "")
	queues.WaitState(t, env.vc, q.Name, v1beta1.QueueStateOpen)
	deleteQueueAfter(t, q.Name)
	s.idle = s.status(t, "VmRSS")
	return s
}

// pidOf finds the process of a serve started by cptest.StartServe: the one
// whose command line holds its (unique, reserved) health address.
func pidOf(t *testing.T, p *cptest.Serve) int {
	t.Helper()
	want := "--health-probe-bind-address=" + p.Health
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == want {
				return pid
			}
		}
	}
	t.Fatalf("no process runs serve with %s", want)
	return 0
}

// status reads one of the memory lines of /proc/<pid>/status, in bytes.
func (s *serve) status(t *testing.T, key string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		t.Fatalf("serve's status: %v (exited: %v, %v)\n%s", err, s.Exited(), s.Err(), s.LastLog(40))
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", key, v)
		}
		return kb << 10
	}
	t.Fatalf("no %s in /proc/%d/status", key, s.pid)
	return 0
}

// result is what one run measured.
type result struct {
	name         string
	idle, peak   int64
	closeLatency time.Duration
	closeState   v1beta1.QueueState
}

func (r result) String() string {
	return fmt.Sprintf("%-34s idle RSS %4d MiB, peak RSS %4d MiB (+%4d MiB), close applied in %v (%s)",
		r.name, r.idle>>20, r.peak>>20, (r.peak-r.idle)>>20, r.closeLatency.Round(time.Millisecond), r.closeState)
}

// check fails the run when serve is not running and ready, its peak RSS
// grew past MaxGrowth, or the close was late; it logs what was measured.
func (s *serve) check(t *testing.T, name string, closeLatency time.Duration, state v1beta1.QueueState) result {
	t.Helper()
	r := result{name: name, idle: s.idle, closeLatency: closeLatency, closeState: state}
	if s.Exited() {
		t.Fatalf("serve exited: %v\n%s", s.Err(), s.LastLog(60))
	}
	r.peak = s.status(t, "VmHWM")
	t.Logf("%v", r)
	s.keepDiagnostics(t, name)
	if grew := r.peak - r.idle; grew > MaxGrowth {
		t.Errorf("serve's peak RSS %d MiB is %d MiB over its idle RSS %d MiB: more than %d MiB",
			r.peak>>20, grew>>20, r.idle>>20, MaxGrowth>>20)
	}
	if closeLatency > CloseDeadline {
		t.Errorf("the queue close was applied %v after it was issued: more than %v", closeLatency, CloseDeadline)
	}
	resp, err := http.Get("http://" + s.Health + "/readyz")
	if err != nil {
		t.Fatalf("serve's /readyz: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("serve's /readyz: %s", resp.Status)
	}
	return r
}

// victim is an Open queue without podgroups, the queue a user closes
// while serve deals with the hostile objects.
func victim(t *testing.T) *v1beta1.Queue {
	t.Helper()
	q := queues.Create(t, env.vc, runName("victim"), "")
	deleteQueueAfter(t, q.Name)
	return queues.WaitState(t, env.vc, q.Name, v1beta1.QueueStateOpen)
}

// closeQueue closes q as 'kubectl vc queue close' and vcctl do (a
// CloseQueue Command) and returns how long after the Command was sent the
// queue's status said Closed, and that state. It watches the queue from
// before the Command, so the time is that of the event, not of a poll.
func closeQueue(t *testing.T, q *v1beta1.Queue) (time.Duration, v1beta1.QueueState) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	w, err := env.vc.SchedulingV1beta1().Queues().Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", q.Name).String(), ResourceVersion: q.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	issued := time.Now()
	queues.Command(t, env.vc, q, busv1alpha1.CloseQueueAction)
	for ev := range w.ResultChan() {
		got, ok := ev.Object.(*v1beta1.Queue)
		if !ok {
			t.Fatalf("watch of queue %s: %v", q.Name, ev.Object)
		}
		// No podgroup is in the queue: the state table closes it to Closed.
		if got.Status.State == v1beta1.QueueStateClosed {
			return time.Since(issued), got.Status.State
		}
	}
	t.Fatalf("queue %s not Closed %v after its close was issued", q.Name, waitFor)
	return 0, ""
}

// deleteQueueAfter deletes a queue when the test ends (after the serve
// processes it started, which are stopped first).
func deleteQueueAfter(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		err := env.vc.SchedulingV1beta1().Queues().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete queue %s: %v", name, err)
		}
	})
}

var names atomic.Int64

// runName is a name of this run of the test: the suite shares a control
// plane across tests and across runs (go test -count=N).
func runName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid()%100000, names.Add(1))
}

// eventually polls cond until it holds, within waitFor.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, waitFor, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok && err == nil, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// diagDir is where KVC_HOSTILE_DIAG asks each run's diagnostics to be kept:
// serve's log (with the Go runtime's GC trace when the test runs with
// GODEBUG=gctrace=1, which serve inherits) and its heap profile once the
// run is measured (go tool pprof -sample_index=inuse_space). serve is then
// started with --profiling, its profiles read over HTTPS with a token of
// the test's (cptest.StartProfiledServe).
func diagDir() string { return os.Getenv("KVC_HOSTILE_DIAG") }

// keepDiagnostics keeps the run's diagnostics in diagDir, if set.
func (s *serve) keepDiagnostics(t *testing.T, name string) {
	t.Helper()
	dir := diagDir()
	if dir == "" {
		return
	}
	base := filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_").Replace(name))
	resp, err := s.Get("/debug/pprof/heap")
	if err != nil {
		t.Errorf("heap profile: %v", err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("heap profile: %s", resp.Status)
		return
	}
	f, err := os.Create(base + ".heap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		t.Errorf("heap profile: %v", err)
	}
	log, err := os.ReadFile(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".log", log, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("diagnostics kept in %s.heap and %s.log", base, base)
}
