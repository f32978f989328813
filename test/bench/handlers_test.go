package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/freeport"
)

// The throughput benchmarks (pods grouped, queues closed) run each pass in
// one of several setups, because where the handler runs and how hard the
// load is pushed change serve/floor: in the benchmark's process, serve's
// controller and the floor share the Go runtime (scheduler, GC) with the
// creators and the watching informers, which slows both alike; on a real
// node serve is a process of its own, and so is whatever creates the work.

// setup is one way of running a throughput pass.
type setup struct {
	name string
	// processes runs each handler as its own process: serve from the
	// binary (buildBinary), the floor from this test binary
	// (TestFloorProcess). Otherwise both run in the benchmark's process.
	processes bool
	// creators is how many clients create the work at once.
	creators int
	// cold starts the handler when the work starts instead of before: the
	// pass then includes the handler's first seconds (process start,
	// discovery, informers listing), as when a controller is started
	// and the load arrives at once.
	cold bool
	// beside runs serve with these controllers too (processes only): the
	// queue controller beside the podgroup controller is how serve runs by
	// default, and it reads every podgroup the other creates.
	beside string
}

// allSetups: today's in-process setup with its 16 creators, the same with
// 32 creators, the wire-level setup (processes, 32 creators), that one
// with the handler started as the work arrives, and that one with the
// queue controller running beside the handler, as serve runs by default.
var allSetups = []setup{
	{name: "in-process-16", creators: 16},
	{name: "in-process-32", creators: 32},
	{name: "processes-32", processes: true, creators: 32},
	{name: "processes-32-cold", processes: true, creators: 32, cold: true},
	{name: "processes-32-with-queue", processes: true, creators: 32, beside: "queue"},
}

// benchSetups are the setups VC_BENCH_SETUPS names (comma-separated),
// all of them when unset.
func benchSetups(b *testing.B) []setup {
	v := os.Getenv("VC_BENCH_SETUPS")
	if v == "" {
		return allSetups
	}
	var out []setup
	for _, name := range strings.Split(v, ",") {
		found := false
		for _, s := range allSetups {
			if s.name == strings.TrimSpace(name) {
				out, found = append(out, s), true
			}
		}
		if !found {
			b.Fatalf("VC_BENCH_SETUPS: unknown setup %q", name)
		}
	}
	return out
}

// handler is one started handler of a pass: serve's controller or the
// floor.
type handler struct {
	// requests are its requests so far by method; settled waits until its
	// writes stop moving (events are posted asynchronously and belong to
	// the pass that caused them).
	requests func(settled bool) map[string]float64
	stop     func()
}

// startDuring starts a handler with start and runs work, which calls
// begin when the measured work begins: the handler is started before work
// or, for s.cold, by begin. It returns the handler and its request counts
// before the work (a cold handler's first: none).
func startDuring(b *testing.B, s setup, start func() handler, work func(begin func())) (h handler, before map[string]float64) {
	if !s.cold {
		h = start()
		before = h.requests(true)
		work(func() {})
		return h, before
	}
	started := make(chan handler, 1)
	work(func() {
		go func() {
			// A start that fails calls b.Fatal here, which ends only
			// this goroutine: the zero handler then tells the caller.
			var h handler
			defer func() { started <- h }()
			h = start()
		}()
	})
	if h = <-started; h.stop == nil {
		b.FailNow()
	}
	return h, map[string]float64{}
}

// inProcess is a handler running in the benchmark's process, its requests
// counted by c.
func inProcess(c *methodCounter, stop func()) handler {
	return handler{stop: stop, requests: func(settled bool) map[string]float64 {
		if settled {
			return c.settled()
		}
		return c.snapshot()
	}}
}

// passHandlers starts the floor or serve's controller for s: in-process on
// cfg, or as processes on kubeconfig (serve from bin).
type passHandlers struct {
	s          setup
	cfg        *rest.Config
	kubeconfig string
	bin        string
}

// passHandlersFor is the handlers of a benchmark on cp: a kubeconfig and
// serve's binary are made only when a setup of VC_BENCH_SETUPS runs
// processes.
func passHandlersFor(b *testing.B, cp *controlplane.ControlPlane, cfg *rest.Config) passHandlers {
	p := passHandlers{cfg: cfg}
	for _, s := range benchSetups(b) {
		if s.processes {
			p.bin = buildBinary(b)
			p.kubeconfig = filepath.Join(b.TempDir(), "kubeconfig")
			if err := cp.WriteKubeconfig(p.kubeconfig, controlplane.AdminUser); err != nil {
				b.Fatal(err)
			}
			break
		}
	}
	return p
}

// floor starts the floor of kind ("podgroup", "close"); inproc starts it in
// this process.
func (p passHandlers) floor(b *testing.B, kind string, inproc func(cfg *rest.Config) (stop func())) handler {
	if p.s.processes {
		return floorProcess(b, p.kubeconfig, kind)
	}
	c := newMethodCounter()
	return inProcess(c, inproc(c.wrap(p.cfg)))
}

// serve starts serve's controller name with flags.
func (p passHandlers) serve(b *testing.B, name string, flags ...string) handler {
	if p.s.processes {
		if p.s.beside != "" && p.s.beside != name {
			name += "," + p.s.beside
		}
		return serveProcess(b, p.bin, p.kubeconfig, name, flags...)
	}
	c := newMethodCounter()
	return inProcess(c, startController(b, c.wrap(p.cfg), name, flags...))
}

// serveProcess runs 'serve --controllers=name' from bin with flags, and
// returns once it is ready; its requests are read from its metrics.
func serveProcess(b *testing.B, bin, kubeconfig, name string, flags ...string) handler {
	b.Helper()
	health, metrics := freeport.Addr(b), freeport.Addr(b)
	args := append([]string{"serve", "--kubeconfig=" + kubeconfig, "--controllers=" + name,
		"--health-probe-bind-address=" + health, "--metrics-bind-address=" + metrics,
		"--metrics-secure=false"}, flags...)
	cmd := exec.Command(bin, args...)
	dir := os.Getenv("VC_BENCH_LOG_DIR") // kept after the benchmark, as launch's
	if dir == "" {
		dir = b.TempDir()
	}
	logf, err := os.CreateTemp(dir, "serve-"+name+"-*.log")
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
	if err := waitReady(health, exited); err != nil {
		stop()
		log, _ := os.ReadFile(logf.Name())
		b.Fatalf("serve: %v\n%s", err, log)
	}
	return handler{stop: stop, requests: func(s bool) map[string]float64 {
		if s {
			return settled(b, metrics)
		}
		return requests(b, metrics)
	}}
}

// floorProcess runs the floor of kind in a process of its own: this test
// binary's TestFloorProcess, which answers "counts" and "settled" on its
// stdin with its request counts (JSON, one line) and stops when its stdin
// closes.
func floorProcess(b *testing.B, kubeconfig, kind string) handler {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFloorProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VC_BENCH_FLOOR_PROCESS="+kind, "VC_BENCH_FLOOR_KUBECONFIG="+kubeconfig)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	next := func() string {
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, "floor: ") {
				return strings.TrimPrefix(l, "floor: ")
			}
		}
		b.Fatalf("floor process %s ended: %v", kind, cmd.Wait())
		return ""
	}
	if l := next(); l != "ready" {
		b.Fatalf("floor process %s: %q before ready", kind, l)
	}
	return handler{
		requests: func(s bool) map[string]float64 {
			q := "counts"
			if s {
				q = "settled"
			}
			fmt.Fprintln(stdin, q)
			out := map[string]float64{}
			if err := json.Unmarshal([]byte(next()), &out); err != nil {
				b.Fatal("floor process:", err)
			}
			return out
		},
		stop: func() {
			stdin.Close()
			_, _ = io.Copy(io.Discard, stdout)
			if err := cmd.Wait(); err != nil {
				b.Error("floor process:", err)
			}
		},
	}
}

// TestFloorProcess is the floor run as its own process by floorProcess;
// without VC_BENCH_FLOOR_PROCESS it does nothing.
func TestFloorProcess(t *testing.T) {
	kind := os.Getenv("VC_BENCH_FLOOR_PROCESS")
	if kind == "" {
		t.Skip("a floor process of the throughput benchmarks (see floorProcess)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("VC_BENCH_FLOOR_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS = -1 // as the in-process floor: no client-side throttle
	c := newMethodCounter()
	var stop func()
	switch kind {
	case "podgroup":
		stop = startPodGroupFloor(t, c.wrap(cfg))
	case "close":
		stop = startCloseFloor(t, c.wrap(cfg))
	case "coldstart":
		// Started by launch like serve, and killed like it: its requests
		// are read from its metrics.
		serveFloorMetrics(t, os.Getenv("VC_BENCH_FLOOR_METRICS"), c)
		startColdStartFloor(t, c.wrap(cfg))
		select {}
	case "pods":
		// BenchmarkScale's pods pass: the cold start, then what its steady
		// state asks of serve (a queue closed by a Command, new pods
		// grouped), each done the least way.
		serveFloorMetrics(t, os.Getenv("VC_BENCH_FLOOR_METRICS"), c)
		startCloseFloor(t, c.wrap(cfg))
		startPodGroupFloor(t, c.wrap(cfg))
		startColdStartFloor(t, c.wrap(cfg))
		select {}
	default:
		t.Fatalf("unknown floor %q", kind)
	}
	defer stop()
	fmt.Println("floor: ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		counts := c.snapshot()
		if in.Text() == "settled" {
			counts = c.settled()
		}
		out, _ := json.Marshal(counts)
		fmt.Printf("floor: %s\n", out)
	}
}
