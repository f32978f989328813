package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
	"github.com/kubectl-vc/kubectl-vc/pkg/slurm"
)

// slurmRefreshNodes is the size of the Slurm cluster BenchmarkSlurmRefresh reads.
const slurmRefreshNodes = 200

// BenchmarkSlurmRefresh measures what the NodeSet controller does once per
// sync: read the states of every node of a 200-node Slurm. With the Slurm
// commands (Debian 12's slurmctld 22.05, one sinfo process) and over
// slurmrestd (Slurm 24.11 and 26.05 from the chroots 'make slurm' builds,
// nodes declared without slurmd), each either with nothing changed since
// the last refresh (the common case: 26.05 answers 304) or after one
// node's state changed. It reports requests (processes for the commands)
// and bytes received per refresh.
func BenchmarkSlurmRefresh(b *testing.B) {
	nodes := make([]string, slurmRefreshNodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("bench-%03d", i)
	}
	b.Run("commands", func(b *testing.B) {
		c := slurmtest.StartT(b, nodes...)
		cl := c.Client()
		refreshLoop(b, cl, func(ctx context.Context, i int) error {
			_, err := c.Scontrol(ctx, "update", "nodename="+nodes[i%len(nodes)], "weight="+fmt.Sprint(1+i%2))
			return err
		}, func() (int64, int64) { return 1, 0 })
	})
	for _, s := range slurmtest.RESTSuites {
		b.Run(s.Name, func(b *testing.B) {
			if err := slurmtest.RESTUnavailable(s); err != nil {
				b.Skip(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c, err := slurmtest.StartREST(ctx, s, nodes, slurmtest.WithoutSlurmd())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(c.Stop)
			tok, err := slurm.NewSignedToken(c.JWTKey, "")
			if err != nil {
				b.Fatal(err)
			}
			ct := &countingTransport{next: http.DefaultTransport}
			cl, err := slurm.NewREST(slurm.RESTConfig{URL: c.URL, Token: tok, Transport: ct})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cl.Version(ctx); err != nil {
				b.Fatal(err)
			}
			refreshLoop(b, cl, func(ctx context.Context, i int) error {
				_, err := c.Command(ctx, "scontrol", "update", "nodename="+nodes[i%len(nodes)], "weight="+fmt.Sprint(1+i%2))
				return err
			}, ct.take)
		})
	}
}

// refreshLoop runs the unchanged and changed sub-benchmarks: change alters
// one node between refreshes (outside the timer); counts returns and
// resets the requests and bytes since the last call.
func refreshLoop(b *testing.B, cl slurm.Client, change func(context.Context, int) error, counts func() (int64, int64)) {
	ctx := context.Background()
	if err := cl.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	if n := len(cl.Nodes()); n != slurmRefreshNodes {
		b.Fatalf("%d nodes read, want %d", n, slurmRefreshNodes)
	}
	for _, changed := range []bool{false, true} {
		name := "unchanged"
		if changed {
			name = "changed"
		}
		b.Run(name, func(b *testing.B) {
			// Warm: the first refresh of a kind may differ (24.11 learns
			// it must not send update_time).
			if err := cl.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
			counts()
			var reqs, bytes int64
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				if changed {
					if err := change(ctx, i); err != nil {
						b.Fatal(err)
					}
				}
				// slurmctld's times have a resolution of a second, and it
				// answers in full to an update_time in the second of the
				// last change: refreshes a second apart, as the
				// controller's are (every 30 s, or per sync).
				time.Sleep(1100 * time.Millisecond)
				counts()
				b.StartTimer()
				if err := cl.Refresh(ctx); err != nil {
					b.Fatal(err)
				}
				r, by := counts()
				reqs += r
				bytes += by
			}
			b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes/op")
		})
	}
}

// countingTransport counts requests and bytes of answers.
type countingTransport struct {
	next           http.RoundTripper
	requests, read atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.requests.Add(1)
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.read}
	}
	return resp, err
}

func (t *countingTransport) take() (int64, int64) {
	return t.requests.Swap(0), t.read.Swap(0)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}
