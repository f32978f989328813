package slurm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// jobsServer is a slurmrestd stand-in whose job list is body.
func jobsServer(t *testing.T, body func(w http.ResponseWriter)) *REST {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/slurm/v0.0.44/ping/":
			_, _ = w.Write([]byte(`{"pings":[{"hostname":"c","pinged":"UP"}]}`))
		case "/slurm/v0.0.44/jobs/":
			body(w)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44", Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestJobListKeepsOnlyEndingJobs: of a job list, a refresh keeps only the
// running jobs with a known end, and no more of them than one hostlist's
// names: 64 MiB of the smallest jobs were kept whole (some 20 million
// decoded jobs).
func TestJobListKeepsOnlyEndingJobs(t *testing.T) {
	const pending = 400_000
	running := `{"job_id":7,"job_state":["RUNNING"],"nodes":"n5","end_time":{"set":true,"number":2000},"time_limit":{"set":true,"number":60}}`
	var before, during runtime.MemStats
	c := jobsServer(t, func(w http.ResponseWriter) {
		_, _ = w.Write([]byte(`{"jobs":[`))
		for range pending {
			_, _ = w.Write([]byte(`{"job_state":["PENDING"],"nodes":"n1"},`))
		}
		// The client has read all but what the socket buffers hold (a
		// few MiB of these 16): the jobs it keeps are live now.
		w.(http.Flusher).Flush()
		runtime.GC()
		runtime.ReadMemStats(&during)
		_, _ = w.Write([]byte(running + `]}`))
	})
	runtime.GC()
	runtime.ReadMemStats(&before)
	end, err := c.JobEndDeadline(context.Background(), "n5")
	if err != nil || end.Unix() != 2000 {
		t.Fatalf("JobEndDeadline(n5) = %v, %v; want the running job's end 2000", end.Unix(), err)
	}
	// Kept, the pending jobs read so far are tens of MiB of live heap.
	if grown := int64(during.HeapAlloc) - int64(before.HeapAlloc); grown > 8<<20 {
		t.Errorf("the live heap grew by %d MiB while %d pending jobs were read", grown>>20, pending)
	}

	many := jobsServer(t, func(w http.ResponseWriter) {
		_, _ = w.Write([]byte(`{"jobs":[`))
		for i := range maxHostlist + 1 {
			_, _ = fmt.Fprintf(w, `{"job_state":["RUNNING"],"nodes":"n%d","end_time":2000,"time_limit":60},`, i%100)
		}
		_, _ = w.Write([]byte(running + `]}`))
	})
	if _, err := many.JobEndDeadline(context.Background(), "n5"); err == nil || !strings.Contains(err.Error(), "running jobs") {
		t.Fatalf("JobEndDeadline over %d running jobs: %v, want them refused", maxHostlist+2, err)
	}
}
