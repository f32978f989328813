package slurm

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bigNodesAnswer is a nodes answer of n nodes as slurmrestd prints it
// (about 120 bytes a node).
func bigNodesAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"nodes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"kvc-%d","state":["IDLE","DRAIN"],"reason":"kubectl-vc: scale-in","cpus":64,"features":[]}`, i)
	}
	b.WriteString(`],"last_update":{"set":true,"infinite":false,"number":100},"errors":[],"warnings":[]}`)
	return b.Bytes()
}

// peakRSS resets the process's peak resident memory (Linux's
// /proc/self/clear_refs) and returns a function that reads how far above
// the resident memory at the reset it went since; ok is false where Linux
// does not say.
func peakRSS() (since func() int64, ok bool) {
	runtime.GC()
	debug.FreeOSMemory()
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		return nil, false
	}
	base, ok := procStatusKB("VmRSS:")
	if !ok {
		return nil, false
	}
	return func() int64 {
		hwm, _ := procStatusKB("VmHWM:")
		return (hwm - base) << 10
	}, true
}

func procStatusKB(field string) (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// BenchmarkRESTRefreshLargeAnswer: one Refresh of an answer of the most
// nodes one may list (maxNodes, about 14 MiB; until issue 42 bounded the
// count, it measured 500 000 nodes, 55 MiB). B/op is all it allocates;
// peak-RSS-B how far the process's resident memory rose above what it was
// before the first Refresh (the answer's bytes, served from this process,
// are resident already). Run it alone in its process, once per count:
//
//	for i in 1 2 3; do go test -run '^$' -bench BenchmarkRESTRefreshLargeAnswer -benchmem -benchtime 1x ./pkg/slurm; done
func BenchmarkRESTRefreshLargeAnswer(b *testing.B) {
	body := bigNodesAnswer(maxNodes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/slurm/v0.0.44/ping/" {
			_, _ = w.Write([]byte(`{"pings":[{"hostname":"c","pinged":"UP"}]}`))
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Version(ctx); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	c.noSince.Store(true) // a full answer each time, never a 304
	rss, measured := peakRSS()
	for b.Loop() {
		c.replace(nil, 0)
		if err := c.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		if len(c.Nodes()) != maxNodes {
			b.Fatalf("%d nodes", len(c.Nodes()))
		}
	}
	if measured {
		b.ReportMetric(float64(rss()), "peak-RSS-B")
	}
}

// TestRESTAnswerNotHeldWhole: while a large nodes answer is decoded, the
// live heap never holds the answer's bytes whole (they were read whole,
// then decoded, until issue 42): sampled after a collection every 25 000
// nodes, it stays below a quarter of the answer's size above where it
// started.
func TestRESTAnswerNotHeldWhole(t *testing.T) {
	// The most nodes an answer may list (about 14 MiB).
	const nodes = maxNodes
	body := bigNodesAnswer(nodes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	// -race on a loaded machine takes tens of seconds to decode it.
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44", Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	var seen, samples int
	var most uint64
	resp := restNodesResponse{node: func(restNode) error {
		// The nodes are dropped: what stays live is the client's own.
		if seen++; seen%25_000 == 0 {
			samples++
			most = max(most, live())
		}
		return nil
	}}
	if _, err := c.request(context.Background(), "v0.0.44", http.MethodGet, "nodes/", nil, nil, &resp); err != nil {
		t.Fatal(err)
	}
	if seen != nodes || samples == 0 {
		t.Fatalf("%d nodes decoded, %d samples", seen, samples)
	}
	if grew := int64(most) - int64(base); grew > int64(len(body)/4) {
		t.Fatalf("the live heap grew by %d MiB while a %d MiB answer was decoded: it holds the answer",
			grew>>20, len(body)>>20)
	}
}

// TestJobEndDeadlineBoundsTheJobLists: the running jobs' hostlists are
// expanded within one hostlist's bound in all, once per job list, not
// again at every call: three jobs of a million names each (a hostile
// answer, 3 million names) leave the deadline unknown with an error
// saying why, where each call expanded all three lists.
func TestJobEndDeadlineBoundsTheJobLists(t *testing.T) {
	var jobsAsked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/slurm/v0.0.44/ping/":
			_, _ = w.Write([]byte(`{"pings":[{"hostname":"c","pinged":"UP"}]}`))
		case "/slurm/v0.0.44/jobs/":
			if jobsAsked.Add(1) > 1 && r.URL.Query().Get("update_time") == "100" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			job := `{"job_id":%d,"job_state":["RUNNING"],"nodes":"n[0-999999]","end_time":{"set":true,"number":2000},"time_limit":{"set":true,"number":60}}`
			_, _ = fmt.Fprintf(w, `{"jobs":[`+job+`,`+job+`,`+job+`],"last_update":{"set":true,"number":100}}`, 1, 2, 3)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44", Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.JobEndDeadline(context.Background(), "n5"); err == nil || !strings.Contains(err.Error(), "too many names") {
			t.Fatalf("JobEndDeadline over 3 million names: %v", err)
		}
	}
	if n := jobsAsked.Load(); n != 2 {
		t.Fatalf("the job list was asked %d times, want 2 (the second answered 304)", n)
	}
}
