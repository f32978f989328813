package hostile

// The rows of issue 58 (hostile tenants, round two): what any pod, any
// token and a slurmrestd can do to serve without writing an object serve
// reads.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
)

func init() { rows = append(rows, rows58...) }

// The flood rows' bounds: each lasts floodFor, from its own loopback
// address (serve bounds connections per client address; the probes and
// the reader come from 127.0.0.1, as kubelet and Prometheus come from
// addresses of their own).
const (
	floodFor = 20 * time.Second
	// slowConns is the slow connections held to each of the two ports.
	slowConns = 200
	// probeTimeout is kubelet's probe timeout (1 s by default), doubled
	// for the loaded two-core machine.
	probeTimeout = 2 * time.Second
)

// flood is a background flood and what it measured.
type flood struct {
	done chan struct{}
	mu   sync.Mutex
	// notes are the flood's measurements, logged by handled.
	notes []string
	// failures are what the row requires and did not get.
	failures []string
}

func (f *flood) note(format string, args ...any) {
	f.mu.Lock()
	f.notes = append(f.notes, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

func (f *flood) fail(format string, args ...any) {
	f.mu.Lock()
	f.failures = append(f.failures, fmt.Sprintf(format, args...))
	f.mu.Unlock()
}

// wait waits for the flood's end and reports it.
func (f *flood) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(floodFor + waitFor):
		t.Fatal("the flood did not end")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.notes {
		t.Log(n)
	}
	for _, e := range f.failures {
		t.Error(e)
	}
}

// dialFrom opens a TCP connection to addr from the loopback address src,
// over TLS when secure.
func dialFrom(ctx context.Context, src, addr string, secure bool) (net.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	if !secure {
		return d.DialContext(ctx, "tcp", addr)
	}
	td := &tls.Dialer{NetDialer: d, Config: &tls.Config{InsecureSkipVerify: true}}
	return td.DialContext(ctx, "tcp", addr)
}

// slowSender holds a connection to addr, sending a request's headers
// slowly towards Go's default limit of 1 MiB (64 KiB every half second,
// within serve's 10 s read timeout), dialling again when serve closes it,
// until ctx ends. It counts its connections and those refused.
func slowSender(ctx context.Context, src, addr string, secure bool, dials, closed *atomic.Int64) {
	pad := "X-Pad: " + strings.Repeat("a", 64<<10) + "\r\n"
	for ctx.Err() == nil {
		c, err := dialFrom(ctx, src, addr, secure)
		if err != nil {
			closed.Add(1)
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		dials.Add(1)
		_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: serve\r\n")
		for sent := 0; err == nil && sent < 1<<20 && ctx.Err() == nil; sent += len(pad) {
			_, err = io.WriteString(c, pad)
			sleep(ctx, 500*time.Millisecond)
		}
		if err != nil {
			closed.Add(1)
		}
		_ = c.Close()
		sleep(ctx, 100*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// probe GETs serve's /healthz as kubelet does (a new connection each
// time, its timeout) every 250 ms until ctx ends, noting the slowest answer
// and each probe not answered ok in time. As kubelet restarts a container
// only after failureThreshold probes in a row fail, so the flood fails
// only when that many in a row fail (a loaded machine may delay one).
func probe(ctx context.Context, f *flood, addr string) {
	const failureThreshold = 3 // kubelet's default
	client := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	var n, bad, inRow, worstRow int
	var slowest time.Duration
	for ctx.Err() == nil {
		start := time.Now()
		resp, err := client.Get("http://" + addr + "/healthz")
		took := time.Since(start)
		n++
		slowest = max(slowest, took)
		failed := ""
		switch {
		case err != nil:
			failed = err.Error()
		default:
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed = resp.Status
			}
		}
		if failed == "" {
			inRow = 0
		} else {
			bad, inRow = bad+1, inRow+1
			worstRow = max(worstRow, inRow)
			f.note("/healthz during the flood: %s", failed)
		}
		sleep(ctx, 250*time.Millisecond)
	}
	f.note("/healthz during the flood: %d probes, %d failed (at most %d in a row), the slowest answered in %v", n, bad, worstRow, slowest.Round(time.Millisecond))
	if worstRow >= failureThreshold {
		f.fail("/healthz failed %d probes in a row during the flood: kubelet would restart serve", worstRow)
	}
}

// secureGet GETs path from serve's HTTPS metrics address with token, from
// the loopback address src.
func secureGet(ctx context.Context, client *http.Client, addr, token, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// clientFrom is an HTTPS client whose connections come from src.
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		DialContext: d.DialContext, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 8}}
}

// errors500 is slurmrestd answering its node list with HTTP 500 and
// 100 000 error entries (11 MB), as an overloaded or hostile slurmrestd may.
var errors500 = answer{name: "HTTP 500 with 100 000 errors", status: http.StatusInternalServerError,
	write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
		w.WriteString(`{"errors":[`)
		for i := range 100_000 {
			if i > 0 {
				w.WriteByte(',')
			}
			if _, err := fmt.Fprintf(w, `{"description":"Unable to query nodes, entry %d","error_number":%d,"error":"Unspecified error","source":"slurm_get_node_info"}`, i, 1000+i%1000); err != nil {
				return err
			}
		}
		_, err := w.WriteString(`],"warnings":[]}`)
		return err
	}}

// conditionLimit is the NodeSet CRD's bound on a condition's message.
const conditionLimit = 32768

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// chainSteps is the length of the chain 'jobflow describe' draws, and
// cliRSS the CLI's peak RSS allowed for it (a short command peaks at about
// 40 MiB, docs/development.md).
const (
	chainSteps = 10_000
	cliRSS     = 128 << 20
)

var rows58 = []row{
	{
		name: "jobflow describe of a 10 000-step chain",
		apply: func(t *testing.T, w *world) {
			if !flowCRDs(t) {
				return
			}
			var flows []flowv1alpha1.Flow
			for i := range chainSteps {
				var dep *flowv1alpha1.DependsOn
				if i > 0 {
					dep = &flowv1alpha1.DependsOn{Targets: []string{fmt.Sprintf("s%05d", i-1)}}
				}
				flows = append(flows, flowv1alpha1.Flow{Name: fmt.Sprintf("s%05d", i), DependsOn: dep})
			}
			if _, err := env.vc.FlowV1alpha1().JobFlows(w.ns).Create(context.Background(), &flowv1alpha1.JobFlow{
				ObjectMeta: metav1.ObjectMeta{Name: "long-chain"}, Spec: flowv1alpha1.JobFlowSpec{Flows: flows}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			w.put("long-chain", true)
		},
		// The CLI, not serve, draws it: the built binary's peak RSS and
		// output, which grew with the square of the chain's length.
		handled: func(t *testing.T, w *world) {
			if w.get("long-chain") == nil {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			out := &countingWriter{}
			var stderr strings.Builder
			args := []string{"--kubeconfig", env.kubeconfig, "-n", w.ns, "jobflow", "describe", "long-chain"}
			// Its peak RSS as GNU time reports it: the rusage of a child
			// the test starts itself would include the test process's own
			// (Linux keeps the larger of the two across exec, and Go's
			// fork shares the parent's memory until then).
			rssFile := filepath.Join(t.TempDir(), "rss")
			cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-f", "%M", "-o", rssFile, env.binary}, args...)...)
			cmd.Stdout, cmd.Stderr = out, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("jobflow describe: %v\n%.2000s", err, stderr.String())
			}
			took := time.Since(start)
			b, err := os.ReadFile(rssFile)
			if err != nil {
				t.Fatal(err)
			}
			kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				t.Fatalf("GNU time's %%M: %q", b)
			}
			rss := kb << 10
			t.Logf("jobflow describe of a %d-step chain: %d KiB written in %v, peak RSS %d MiB", chainSteps, out.n>>10, took.Round(time.Millisecond), rss>>20)
			// Linear: a few hundred bytes a step (the drawing and the
			// table), and the CLI's memory within serve's own bound.
			if out.n > chainSteps*1024 {
				t.Errorf("%d bytes written for %d steps: more than 1 KiB a step", out.n, chainSteps)
			}
			if rss > cliRSS {
				t.Errorf("the CLI's peak RSS %d MiB is over %d MiB", rss>>20, cliRSS>>20)
			}
		},
	},
	{
		name: "slow connections to the probe and metrics ports",
		apply: func(t *testing.T, w *world) {
			f := &flood{done: make(chan struct{})}
			w.put("slow", f)
			ctx, cancel := context.WithTimeout(context.Background(), floodFor)
			var dials, closed atomic.Int64
			var wg sync.WaitGroup
			for i := range 2 * slowConns {
				addr, secure := w.serve.Health, false
				if i%2 == 1 {
					addr, secure = w.serve.Metrics, true
				}
				wg.Add(1)
				go func() { defer wg.Done(); slowSender(ctx, "127.0.0.2", addr, secure, &dials, &closed) }()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sleep(ctx, 2*time.Second) // the flood's connections first
				probe(ctx, f, w.serve.Health)
			}()
			go func() {
				wg.Wait()
				cancel()
				f.note("%d slow senders to each port for %v: %d connections, %d closed or refused by serve", slowConns, floodFor, dials.Load(), closed.Load())
				close(f.done)
			}()
		},
		handled: func(t *testing.T, w *world) { w.get("slow").(*flood).wait(t) },
	},
	{
		name: "metrics reviews flooded: unknown paths and random tokens",
		apply: func(t *testing.T, w *world) {
			ctx := context.Background()
			// A token of a ServiceAccount without any right.
			sa, err := env.kube.CoreV1().ServiceAccounts(w.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := env.kube.CoreV1().ServiceAccounts(w.ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			nobody := tok.Status.Token
			// A reader serve has never seen: allowed /metrics, not used
			// before the flood.
			reader := cptest.ProfilerToken(w.t, env.kube)
			f := &flood{done: make(chan struct{})}
			w.put("reviews", f)
			fctx, cancel := context.WithTimeout(context.Background(), floodFor)
			flooder := clientFrom("127.0.0.3")
			var mu sync.Mutex
			codes := map[int]int{}
			var wg sync.WaitGroup
			var n atomic.Int64
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for fctx.Err() == nil {
						i := n.Add(1)
						token, path := nobody, fmt.Sprintf("/metrics/%d/%s", i, strings.Repeat("p", 4000))
						if g%2 == 1 {
							token, path = fmt.Sprintf("random-%d-%s", i, strings.Repeat("t", 1000)), "/metrics"
						}
						code, err := secureGet(fctx, flooder, w.serve.Metrics, token, path)
						if err != nil {
							code = -1
						}
						mu.Lock()
						codes[code]++
						mu.Unlock()
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sleep(fctx, 5*time.Second) // the flood well under way
				start := time.Now()
				code, err := secureGet(context.Background(), clientFrom("127.0.0.1"), w.serve.Metrics, reader, "/metrics")
				if err != nil || code != http.StatusOK {
					f.fail("a reader never seen before, during the flood: %d %v, want 200", code, err)
				}
				f.note("a reader never seen before, during the flood: %d in %v", code, time.Since(start).Round(time.Millisecond))
			}()
			go func() {
				wg.Wait()
				cancel()
				mu.Lock()
				f.note("%d flood requests for %v (distinct paths with a token without rights, random tokens), answered %v (-1: no answer)", n.Load(), floodFor, codes)
				mu.Unlock()
				close(f.done)
			}()
		},
		handled: func(t *testing.T, w *world) { w.get("reviews").(*flood).wait(t) },
	},
	{
		name:  "slurmrestd HTTP 500 with 100 000 errors",
		nodes: []answer{errors500},
		// Its check is this NodeSet's condition naming this answer. All at
		// once, the stand-in's answers rotate among every row's NodeSets,
		// and a NodeSet that keeps failing is synced ever more rarely (the
		// work queue's backoff): in make test at 11:13 it met only the other
		// rows' answers within the two minutes.
		alone: "its check needs this NodeSet to meet this answer, which the shared stand-in gives to whichever NodeSet asks next",
		apply: func(t *testing.T, w *world) { nodeSet(t, w, "errors-500", 1) },
		handled: func(t *testing.T, w *world) {
			eventually(t, "the NodeSet's SlurmReachable=False naming the errors", func() (bool, error) {
				ns, err := env.vc.SlinkyV1beta1().NodeSets(w.ns).Get(context.Background(), "errors-500", metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				c := meta.FindStatusCondition(ns.Status.Conditions, "SlurmReachable")
				if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "HTTP 500") {
					return false, nil
				}
				if len(c.Message) > conditionLimit {
					return false, fmt.Errorf("a condition message of %d bytes", len(c.Message))
				}
				w.put("errors-500 message", c.Message)
				return true, nil
			})
			m := w.get("errors-500 message").(string)
			t.Logf("SlurmReachable=False, a message of %d bytes: %.200s…", len(m), m)
			if !strings.Contains(m, "more errors") {
				t.Errorf("the message does not count the errors left out")
			}
		},
	},
}
