package hostile

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// standIn is an HTTP server in the place of slurmrestd, for the answers a
// real slurmrestd will not give: it speaks every API version serve knows,
// answers pings, single-node reads and node updates as slurmrestd does,
// and answers the node list (and the job list) with the hostile answers
// it is given, one after the other, round and round.
type standIn struct {
	srv *httptest.Server
	// nodes are the answers to GET .../nodes/, taken in turn.
	nodes []answer
	// jobs is the answer to GET .../jobs/ (nil: no jobs).
	jobs *answer
	// nodeState is the state a GET .../node/NAME reports.
	nodeState string
	// known are the node names a plain node list holds.
	known sync.Map

	turn atomic.Int64
	mu   sync.Mutex
	// served counts, per answer, the answers written to their end.
	served map[string]int
	// ended records, per answer, how long each request lasted until the
	// client went away before the answer's end.
	ended map[string][]time.Duration
}

// answer is one way to answer a list request.
type answer struct {
	name string
	// status is the answer's HTTP status (0: 200).
	status int
	write  func(w *bufio.Writer, flush func() error, r *http.Request) error
}

func newStandIn(t *testing.T, nodes []answer, jobs *answer) *standIn {
	t.Helper()
	s := &standIn{nodes: nodes, jobs: jobs, nodeState: `["MIXED","DRAIN"]`,
		served: map[string]int{}, ended: map[string][]time.Duration{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	// Close ends the never-ending answers too: their writes fail.
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// flags are serve's flags that make its NodeSet controller reach the
// stand-in: its URL and a token file (the stand-in takes any token).
func (s *standIn) flags(t *testing.T) []string {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("hostile-test-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--slurm-rest-url=" + s.srv.URL, "--slurm-token-file=" + tok}
}

func (s *standIn) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// /slurm/<version>/<path>
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/slurm/"), "/", 2)
	if len(parts) != 2 {
		http.NotFound(w, r)
		return
	}
	path := parts[1]
	w.Header().Set("Content-Type", "application/json")
	switch {
	case path == "ping/":
		fmt.Fprint(w, `{"pings":[{"hostname":"stand-in","pinged":"UP"}],"errors":[],"warnings":[]}`)
	case path == "nodes/" && r.Method == http.MethodGet:
		if len(s.nodes) == 0 {
			s.write(w, r, plainNodes(s))
			return
		}
		a := s.nodes[int(s.turn.Add(1)-1)%len(s.nodes)]
		s.write(w, r, a)
	case strings.HasPrefix(path, "node/") && r.Method == http.MethodGet:
		name := strings.TrimPrefix(path, "node/")
		fmt.Fprintf(w, `{"nodes":[{"name":%q,"state":%s,"reason":"hostile test"}],"errors":[],"warnings":[]}`, name, s.nodeState)
	case strings.HasPrefix(path, "node/") && r.Method == http.MethodPost:
		fmt.Fprint(w, `{"errors":[],"warnings":[]}`)
	case path == "jobs/" && r.Method == http.MethodGet:
		if s.jobs == nil {
			fmt.Fprint(w, `{"jobs":[],"errors":[],"warnings":[]}`)
			return
		}
		s.write(w, r, *s.jobs)
	default:
		http.NotFound(w, r)
	}
}

func (s *standIn) write(w http.ResponseWriter, r *http.Request, a answer) {
	start := time.Now()
	if a.status != 0 {
		w.WriteHeader(a.status)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	flush := func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		return http.NewResponseController(w).Flush()
	}
	err := a.write(bw, flush, r)
	if err == nil {
		err = bw.Flush()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.ended[a.name] = append(s.ended[a.name], time.Since(start))
		return
	}
	s.served[a.name]++
}

// servedCount is how many times the named answer was written to its end.
func (s *standIn) servedCount(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[name]
}

// endedEarly lists how long the requests for the named answer lasted that
// the client left before the answer's end.
func (s *standIn) endedEarly(name string) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ended[name]...)
}

// plainNodes is an ordinary node list: the nodes the test made known, idle.
func plainNodes(s *standIn) answer {
	return answer{name: "plain", write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
		w.WriteString(`{"nodes":[`)
		first := true
		s.known.Range(func(k, _ any) bool {
			if !first {
				w.WriteByte(',')
			}
			first = false
			fmt.Fprintf(w, `{"name":%q,"state":["MIXED"]}`, k)
			return true
		})
		_, err := w.WriteString(`],"last_update":{"set":true,"infinite":false,"number":0},"errors":[],"warnings":[]}`)
		return err
	}}
}

// The hostile answers.

// answerSlurmBound is serve's bound on one slurmrestd answer (64 MiB,
// pkg/slurm's maxAnswer; docs/security.md).
const answerSlurmBound = 64 << 20

// repeat writes b n times, then tail.
func repeat(w *bufio.Writer, b []byte, n int, tail string) error {
	for range n {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := w.WriteString(tail)
	return err
}

// oversized is a node list of 65 MiB, past the bound: valid JSON all the
// way (nodes padded with a long reason), so only its size is wrong.
var oversized = answer{name: "65 MiB node list", write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
	node := []byte(`{"name":"big","state":["IDLE"],"reason":"` + strings.Repeat("x", 1000) + `"},`)
	w.WriteString(`{"nodes":[`)
	return repeat(w, node, (65<<20)/len(node)+1, `{"name":"last","state":["IDLE"]}],"errors":[],"warnings":[]}`)
}}

// tinyNodes is the longest node list within the bound: just under 64 MiB
// of the smallest nodes, each of another name, that serve keeps.
var tinyNodes = answer{name: "64 MiB of tiny nodes", write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
	const head, tail = `{"nodes":[`, `{"name":"z","state":["IDLE"]}]}`
	budget := answerSlurmBound - len(head) - len(tail) - 64
	w.WriteString(head)
	for i := 0; ; i++ {
		n := fmt.Sprintf(`{"name":"n%x","state":["IDLE"]},`, i)
		if budget -= len(n); budget < 0 {
			break
		}
		if _, err := w.WriteString(n); err != nil {
			return err
		}
	}
	_, err := w.WriteString(tail)
	return err
}}

// deepUnknown nests lists as deep as the bound allows under a key serve
// does not read ("meta", which slurmrestd's answers carry): 32 Mi of '['
// then as many ']' (64 MiB in all).
var deepUnknown = answer{name: "deep JSON under an unread key", write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
	const head, tail = `{"nodes":[],"meta":`, `}`
	depth := (answerSlurmBound - len(head) - len(tail) - 64) / 2
	open, close := bytes.Repeat([]byte{'['}, 1<<16), bytes.Repeat([]byte{']'}, 1<<16)
	w.WriteString(head)
	if err := repeat(w, open, depth>>16, ""); err != nil {
		return err
	}
	return repeat(w, close, depth>>16, tail)
}}

// deepNode nests objects as deep as the bound allows inside the node list,
// where serve decodes each node.
var deepNode = answer{name: "deep JSON in a node", write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
	const head, tail = `{"nodes":[{"name":"deep","state":`, `}]}`
	depth := (answerSlurmBound - len(head) - len(tail) - 64) / 6
	open, close := bytes.Repeat([]byte(`{"a":`), 1<<14), bytes.Repeat([]byte(`}`), 1<<14)
	w.WriteString(head)
	if err := repeat(w, open, depth>>14, "1"); err != nil {
		return err
	}
	return repeat(w, close, depth>>14, tail)
}}

// endless starts a node list and never ends it: a byte every 100 ms, until
// the client goes away. Only serve's own timeout ends the request.
var endless = answer{name: "never-ending node list", write: func(w *bufio.Writer, flush func() error, r *http.Request) error {
	w.WriteString(`{"nodes":[`)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := w.WriteString(" "); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		select {
		case <-r.Context().Done():
			return r.Context().Err()
		case <-tick.C:
		}
	}
}}

// hugeHostlist is a job list whose one running job holds the hostlist
// n[0-9223372036854775807] (2^63 names), read when serve asks how long a
// draining node's jobs may still run.
var hugeHostlist = answer{name: "hostlist n[0-9223372036854775807]", write: func(w *bufio.Writer, _ func() error, _ *http.Request) error {
	end := time.Now().Add(time.Hour).Unix()
	_, err := fmt.Fprintf(w, `{"jobs":[{"job_id":1,"job_state":["RUNNING"],"nodes":"n[0-9223372036854775807]",`+
		`"end_time":{"set":true,"infinite":false,"number":%d},"time_limit":{"set":true,"infinite":false,"number":60}}],"errors":[],"warnings":[]}`, end)
	return err
}}
