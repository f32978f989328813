package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// countingProxy forwards plain HTTP to the API server with the admin's
// credentials and counts the requests. kubectl and kubectl-vc both talk
// to it through the same kubeconfig, so their request counts and wall
// times are measured the same way (and -v output formats do not matter).
type countingProxy struct {
	srv      *httptest.Server
	requests atomic.Int64
}

func newCountingProxy(b *testing.B, cfg *rest.Config) *countingProxy {
	b.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p := &countingProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = rt
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		rp.ServeHTTP(w, r)
	}))
	b.Cleanup(p.srv.Close)
	return p
}

func (p *countingProxy) kubeconfig(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: anyone, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: anyone}}]
current-context: proxy
`, p.srv.URL)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkListAtScale: 'kubectl vc queue list|tree|top' over 10 000
// queues and 'kubectl vc podgroup list -A' over 200 000 podgroups (issue
// 32's 10x; VC_BENCH_LIST_QUEUES and VC_BENCH_LIST_PODGROUPS change them),
// each next to the 'kubectl get' of the same resources: wall time of the
// whole process (output to /dev/null), its peak RSS and the requests it
// made. 'queue list' runs twice:
// before any queue has a status (it must count the podgroups itself) and
// after the statuses hold state and counts, as with a controller running.
func BenchmarkListAtScale(b *testing.B) {
	nq, npg := envInt("VC_BENCH_LIST_QUEUES", 10000), envInt("VC_BENCH_LIST_PODGROUPS", 200000)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		b.Skip("kubectl not on PATH: nothing to compare with")
	}
	bin := buildBinary(b)
	cp := cptest.Start(b)
	cfg := cp.AdminConfig()
	vc := versioned.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	parallel(nq, func(i int) {
		if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &v1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("list-%05d", i)},
			Spec:       v1beta1.QueueSpec{Weight: 1},
		}, metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	createListPodGroups(b, kube, vc, "list-ns", npg, func(i int) string { return fmt.Sprintf("list-%05d", i%nq) })
	if b.Failed() {
		return
	}
	proxy := newCountingProxy(b, cfg)
	kc := proxy.kubeconfig(b)
	// No controller has written the queues' status yet, so 'queue list'
	// counts podgroups itself: its worst case.
	for _, c := range []struct {
		name string
		argv []string
	}{
		{fmt.Sprintf("vc-queue-list/queues=%d", nq), []string{bin, "queue", "list"}},
		{fmt.Sprintf("vc-queue-tree/queues=%d", nq), []string{bin, "queue", "tree"}},
		{fmt.Sprintf("vc-queue-top/queues=%d", nq), []string{bin, "queue", "top"}},
		{fmt.Sprintf("kubectl-get-queues/queues=%d", nq), []string{kubectl, "get", "queues.scheduling.volcano.sh"}},
		{fmt.Sprintf("vc-podgroup-list-A/podgroups=%d", npg), []string{bin, "podgroup", "list", "-A"}},
		{fmt.Sprintf("kubectl-get-podgroups-A/podgroups=%d", npg), []string{kubectl, "get", "podgroups.scheduling.volcano.sh", "-A"}},
	} {
		b.Run(c.name, func(b *testing.B) { runCounted(b, proxy, kc, c.argv) })
	}
	// With serve (or Volcano's controller) running, every queue's status
	// holds its state and counts, and 'queue list' reads nothing else:
	// the case a user meets. The status written is what serve would write.
	statuses := queueStatuses(nq, npg, func(q int) string { return fmt.Sprintf("list-%05d", q) },
		func(i int) v1beta1.PodGroupPhase { return coldPhases[i%len(coldPhases)] })
	parallel(nq, func(i int) {
		name := fmt.Sprintf("list-%05d", i)
		q, err := vc.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		q.Status = statuses[name]
		if _, err := vc.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
			b.Error(err)
		}
	})
	if b.Failed() {
		return
	}
	for _, c := range []struct {
		name string
		argv []string
	}{
		{fmt.Sprintf("vc-queue-list-status-kept/queues=%d", nq), []string{bin, "queue", "list"}},
		{fmt.Sprintf("vc-queue-tree-status-kept/queues=%d", nq), []string{bin, "queue", "tree"}},
		{fmt.Sprintf("vc-queue-top-status-kept/queues=%d", nq), []string{bin, "queue", "top"}},
		{fmt.Sprintf("kubectl-get-queues-status-kept/queues=%d", nq), []string{kubectl, "get", "queues.scheduling.volcano.sh"}},
	} {
		b.Run(c.name, func(b *testing.B) { runCounted(b, proxy, kc, c.argv) })
	}
}

// runCounted runs argv against the counting proxy b.N times and reports
// the wall time of the whole process (output to /dev/null) and the
// requests it made, per run.
func runCounted(b *testing.B, proxy *countingProxy, kubeconfig string, argv []string) {
	var reqs int64
	var maxRSS float64
	var wall time.Duration
	for range b.N {
		cmd, peak := peakRSSCommand(b, append(slices.Clone(argv), "--kubeconfig="+kubeconfig))
		cmd.Env = append(os.Environ(), "KUBECACHEDIR="+b.TempDir()) // no warm discovery cache
		stderr := &limitedBuffer{}
		cmd.Stderr = stderr
		before := proxy.requests.Load()
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, stderr.b)
		}
		wall += time.Since(start)
		reqs += proxy.requests.Load() - before
		maxRSS = max(maxRSS, peak())
	}
	b.ReportMetric(maxRSS, "MiB-peak-RSS")
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/run")
	b.ReportMetric(float64(reqs)/float64(b.N), "requests/run")
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 64<<10 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}
