package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RESTVersions are the slurmrestd API versions the REST client speaks,
// newest first: Slurm 24.11 serves v0.0.40 to v0.0.42, Slurm 26.05 v0.0.42
// to v0.0.45. The fields the client reads are the same in all of them.
var RESTVersions = []string{"v0.0.45", "v0.0.44", "v0.0.43", "v0.0.42", "v0.0.41", "v0.0.40"}

// RESTPort is the port slurmrestd listens on in a Slinky installation.
const RESTPort = 6820

// ErrUnauthorized is wrapped by the errors of requests slurmrestd refused
// for their token: HTTP 401 (no token it accepts) or 511 (a token signed
// with another key, or expired).
var ErrUnauthorized = errors.New("slurmrestd refused the token")

// errNodeInvalid is Slurm's ESLURM_INVALID_NODE_NAME, with which
// slurmrestd refuses to update a node it does not know (HTTP 500).
const errNodeInvalid = 2018

// APIError is a request slurmrestd answered with an HTTP error.
type APIError struct {
	// Request is the method and path, e.g. "GET /slurm/v0.0.42/nodes/".
	Request string
	Status  int
	errs    []restError
	// errsLeftOut counts slurmrestd's errors past those kept (maxEntries).
	errsLeftOut int
	// other is the message of an answer that is not slurmrestd's: the
	// Kubernetes API server's service proxy answers with a Status
	// ("no endpoints available for service ..."), others with text.
	other string
}

func (e *APIError) Error() string {
	var what string
	switch e.Status {
	case http.StatusUnauthorized:
		what = "no token it accepts was sent"
	case http.StatusNetworkAuthenticationRequired:
		what = "the token was rejected (signed with another key, or expired)"
	default:
		what = http.StatusText(e.Status)
	}
	// At most maxEntries errors of at most a few times maxText each:
	// the message is bounded whatever the answer listed, and built once.
	var b strings.Builder
	fmt.Fprintf(&b, "slurmrestd %s: HTTP %d: %s", e.Request, e.Status, what)
	for _, re := range e.errs {
		b.WriteString("; ")
		b.WriteString(re.String())
	}
	if e.errsLeftOut > 0 {
		fmt.Fprintf(&b, "; … and %d more errors", e.errsLeftOut)
	}
	if e.other != "" {
		b.WriteString("; ")
		b.WriteString(e.other)
	}
	return b.String()
}

// Unwrap makes 401 and 511 match ErrUnauthorized.
func (e *APIError) Unwrap() error {
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusNetworkAuthenticationRequired {
		return ErrUnauthorized
	}
	return nil
}

func (e *APIError) hasError(number int) bool {
	return slices.ContainsFunc(e.errs, func(r restError) bool { return r.ErrorNumber == number })
}

// RESTConfig says how to reach slurmrestd.
type RESTConfig struct {
	// URL is slurmrestd's base URL, e.g. http://10.96.0.20:6820.
	URL string
	// Token authenticates every request.
	Token TokenSource
	// Version pins the API version (e.g. "v0.0.44"); empty picks the newest
	// that both sides speak at the first request.
	Version string
	// Transport carries the requests; nil uses a copy of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Timeout bounds one request; zero means 30 seconds.
	Timeout time.Duration
	// Budget, when set, is shared with the other clients of the process:
	// the nodes and jobs this client keeps are charged to it.
	Budget *NodeBudget
}

// REST implements Client with slurmrestd's REST API, as Slinky's
// slurm-operator reaches Slurm: one GET of all nodes per refresh (answered
// 304 when nothing changed), one POST per drain or undrain, and the job
// list, kept the same way, for drain deadlines.
type REST struct {
	cfg  RESTConfig
	base string
	http *http.Client

	nodeCache

	// mu guards the API version and the node list's last update.
	mu          sync.RWMutex
	version     string
	nodesUpdate int64
	// noSince: the server fails requests with update_time (see getSince).
	noSince atomic.Bool

	// jobsMu guards the latest job end per node (jobEnds, or why it is
	// not known) and the job list's last update.
	jobsMu     sync.Mutex
	jobEnds    map[string]time.Time
	jobEndsErr error
	jobsUpdate int64
	// jobsClosed: Close ran; job ends read later are not kept.
	jobsClosed bool
}

var _ Client = &REST{}

// NewREST returns a client for the slurmrestd at cfg.URL.
func NewREST(cfg RESTConfig) (*REST, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("slurmrestd URL %q: want http://HOST:PORT or https://HOST:PORT", cfg.URL)
	}
	if cfg.Token == nil {
		return nil, errors.New("slurmrestd needs a token: give a JWT key or a token file")
	}
	if cfg.Version != "" && !slices.Contains(RESTVersions, cfg.Version) {
		return nil, fmt.Errorf("slurmrestd API version %q: want one of %s", cfg.Version, strings.Join(RESTVersions, ", "))
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	base := strings.TrimRight(u.String(), "/")
	return &REST{cfg: cfg, base: base, http: &http.Client{Transport: tr, Timeout: cfg.Timeout},
		nodeCache: nodeCache{budget: cfg.Budget, holder: base}}, nil
}

// Close gives what the client keeps back to its budget; a client is
// closed when no NodeSet uses it any more. It may still be asked, but
// keeps nothing it reads after.
func (r *REST) Close() {
	r.jobsMu.Lock()
	r.cfg.Budget.give(r.base, len(r.jobEnds))
	r.jobEnds, r.jobsClosed = nil, true
	r.jobsMu.Unlock()
	r.nodeCache.close()
}

// URL is the slurmrestd base URL the client talks to.
func (r *REST) URL() string { return r.base }

// Version returns the API version in use, choosing it first if needed: the
// pinned one if it is served, else the newest served one this client
// speaks. Each candidate costs one GET of /ping/ (404 when not served).
func (r *REST) Version(ctx context.Context) (string, error) {
	r.mu.RLock()
	v := r.version
	r.mu.RUnlock()
	if v != "" {
		return v, nil
	}
	candidates := RESTVersions
	if r.cfg.Version != "" {
		candidates = []string{r.cfg.Version}
	}
	for _, c := range candidates {
		_, err := r.request(ctx, c, http.MethodGet, "ping/", nil, nil, nil)
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			continue
		}
		if err != nil {
			return "", err
		}
		r.mu.Lock()
		r.version = c
		r.mu.Unlock()
		return c, nil
	}
	if r.cfg.Version != "" {
		return "", fmt.Errorf("slurmrestd at %s does not serve the pinned API version %s", r.base, r.cfg.Version)
	}
	return "", fmt.Errorf("slurmrestd at %s serves none of the API versions %s (Slurm 24.11 or newer is needed)",
		r.base, strings.Join(RESTVersions, ", "))
}

// Ping asks slurmrestd whether slurmctld answers. slurmrestd answers 200
// either way; the body says whether slurmctld did ("pinged": "UP"), and it
// does not when the token was refused by slurmctld (an expired one).
func (r *REST) Ping(ctx context.Context) error {
	var resp restPingResponse
	if _, err := r.do(ctx, http.MethodGet, "ping/", nil, nil, &resp); err != nil {
		return err
	}
	for _, p := range resp.Pings {
		if p.Pinged == "UP" {
			return nil
		}
	}
	msg := fmt.Sprintf("slurmrestd at %s: slurmctld does not answer its ping", r.base)
	for _, p := range resp.Pings {
		msg += fmt.Sprintf("; %s %s", p.Hostname, p.Pinged)
	}
	return errors.New(msg)
}

// getSince GETs path, with update_time=since when there is a since and the
// server takes it. Slurm 24.11 answers a nodes request with update_time
// with HTTP 500 ("Unable to query partitions") whenever the partitions did
// not change since, i.e. nearly always: after one such answer the client
// asks that server without update_time (a full list each time) and the
// request is sent again at once.
func (r *REST) getSince(ctx context.Context, path string, since int64, out any) (int, error) {
	if since > 0 && !r.noSince.Load() {
		q := url.Values{"update_time": {strconv.FormatInt(since, 10)}}
		status, err := r.do(ctx, http.MethodGet, path, q, nil, out)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status < 500 {
			return status, err
		}
		r.noSince.Store(true)
	}
	return r.do(ctx, http.MethodGet, path, nil, nil, out)
}

// do sends one request in the API version in use. A 404 for a whole path
// means the server no longer serves that version (it was upgraded): the
// version is chosen again at the next request.
func (r *REST) do(ctx context.Context, method, path string, query url.Values, body, out any) (int, error) {
	v, err := r.Version(ctx)
	if err != nil {
		return 0, err
	}
	status, err := r.request(ctx, v, method, path, query, body, out)
	if status == http.StatusNotFound {
		r.mu.Lock()
		if r.version == v {
			r.version, r.nodesUpdate = "", 0
		}
		r.mu.Unlock()
	}
	return status, err
}

// maxAnswer bounds what serve reads of one slurmrestd answer: an answer
// past it (a server that is not slurmrestd, or a hostile one) is refused
// with an error that says so, rather than cut short and reported as bad
// JSON, and what serve holds for it stays bounded.
const maxAnswer = 64 << 20

// request sends one request. out receives the decoded body of a 2xx
// answer; 304 leaves it alone. Any other status is an *APIError carrying
// slurmrestd's own error entries.
func (r *REST) request(ctx context.Context, version, method, path string, query url.Values, body, out any) (int, error) {
	u := r.base + "/slurm/" + version + "/" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	tok, err := r.cfg.Token.Token(ctx)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-SLURM-USER-TOKEN", tok)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("slurmrestd %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	// The answer is decoded as it is read, never held whole: through a
	// reader that stops one byte past maxAnswer, so that reaching that
	// byte tells a too large answer from one that merely ends there.
	answer := &io.LimitedReader{R: resp.Body, N: maxAnswer + 1}
	tooLarge := func() error {
		return fmt.Errorf("slurmrestd %s %s: the answer is larger than %d MiB: refused unread", method, req.URL.Path, maxAnswer>>20)
	}
	var decodeErr error
	switch {
	case resp.StatusCode == http.StatusNotModified:
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		// Keep the answer's start, to quote an error that is not JSON.
		var start prefixWriter
		ae := &APIError{Request: method + " " + req.URL.Path, Status: resp.StatusCode}
		var env restFailure
		switch decodeErr = decodeAnswer(io.TeeReader(answer, &start), &env); {
		case decodeErr != nil:
			ae.other = strings.TrimSpace(string(start.b))
		case env.Kind == "Status":
			ae.other = env.Message
		default:
			ae.errs, ae.errsLeftOut = env.Errors, env.ErrorsLeftOut
		}
		decodeErr = ae
	case out != nil:
		if err := decodeAnswer(answer, out); err != nil {
			decodeErr = fmt.Errorf("slurmrestd %s %s: %w", method, req.URL.Path, err)
		}
	}
	// What is left unread is read to its end (within the bound), so that
	// an answer over the bound is refused whatever its first value held,
	// and the connection can be reused.
	if _, err := io.Copy(io.Discard, answer); err != nil && decodeErr == nil {
		decodeErr = fmt.Errorf("slurmrestd %s %s: reading the answer: %w", method, req.URL.Path, err)
	}
	if answer.N <= 0 {
		return resp.StatusCode, tooLarge()
	}
	return resp.StatusCode, decodeErr
}

// prefixWriter keeps the first 300 bytes written to it.
type prefixWriter struct{ b []byte }

func (p *prefixWriter) Write(b []byte) (int, error) {
	if room := 300 - len(p.b); room > 0 {
		p.b = append(p.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// Refresh implements Client: one GET of every node, with update_time so
// that slurmrestd answers 304 (no body) when nothing changed since the last.
func (r *REST) Refresh(ctx context.Context) error {
	r.mu.RLock()
	since := r.nodesUpdate
	r.mu.RUnlock()
	// Each node is charged to the budget as it is decoded: the old cache
	// lives on beside the new one until it is replaced.
	nodes := map[string]NodeState{}
	charged := 0
	resp := restNodesResponse{node: func(n restNode) error {
		if err := r.cfg.Budget.take(r.base, 1); err != nil {
			return err
		}
		charged++
		nodes[n.Name] = n.toState()
		return nil
	}}
	status, err := r.getSince(ctx, "nodes/", since, &resp)
	if err != nil || status == http.StatusNotModified {
		r.cfg.Budget.give(r.base, charged)
		return err
	}
	r.replace(nodes, charged)
	r.mu.Lock()
	r.nodesUpdate = 0
	if resp.LastUpdate.known() {
		r.nodesUpdate = resp.LastUpdate.Number
	}
	r.mu.Unlock()
	return nil
}

// State asks slurmrestd (not the cache) for one node and updates the cache.
// A node Slurm does not know is HTTP 200 with no node: ErrNodeNotFound.
func (r *REST) State(ctx context.Context, name string) (NodeState, error) {
	var resp restNodesResponse
	if _, err := r.do(ctx, http.MethodGet, "node/"+url.PathEscape(name), nil, nil, &resp); err != nil {
		return NodeState{}, err
	}
	for _, n := range resp.Nodes {
		if n.Name == name {
			s := n.toState()
			r.put(s)
			return s, nil
		}
	}
	return NodeState{}, fmt.Errorf("%w: %s", ErrNodeNotFound, name)
}

// update posts a node update; Slurm's "invalid node name" is ErrNodeNotFound.
func (r *REST) update(ctx context.Context, name string, u restNodeUpdate) error {
	_, err := r.do(ctx, http.MethodPost, "node/"+url.PathEscape(name), nil, u, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.hasError(errNodeInvalid) {
		return fmt.Errorf("%w: %s", ErrNodeNotFound, name)
	}
	return err
}

// Drain implements Client.
func (r *REST) Drain(ctx context.Context, name, reason string) error {
	if reason == "" {
		// Slurm refuses a drain without a reason.
		reason = "drained by kubectl-vc"
	}
	// A drain replaces the reason of an earlier one: read the node first
	// (not the cache, which may predate an administrator's drain).
	if st, err := r.State(ctx, name); err != nil || st.Drain() {
		return err
	}
	return r.update(ctx, name, restNodeUpdate{State: []string{"DRAIN"}, Reason: reason})
}

// Undrain implements Client. UNDRAIN clears the drain flag and nothing
// else, and is harmless on a node that is not drained (RESUME is refused
// there), so no read is needed first.
func (r *REST) Undrain(ctx context.Context, name string) error {
	return r.update(ctx, name, restNodeUpdate{State: []string{"UNDRAIN"}})
}

// IsDrained implements Client. "Drained" is read from the state flags,
// never from the reason: Slurm 24.11 keeps the reason after an undrain.
func (r *REST) IsDrained(ctx context.Context, name string) (bool, error) {
	s, err := r.State(ctx, name)
	if errors.Is(err, ErrNodeNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return s.Drained(), nil
}

// JobEndDeadline implements Client. slurmrestd cannot filter jobs by node,
// so the job list is kept like the node list (304 when unchanged) and, each
// time it changes, the running jobs' hostlists are expanded once into the
// latest end per node. A job without a time limit has no end to report.
func (r *REST) JobEndDeadline(ctx context.Context, name string) (time.Time, error) {
	ends, err := r.refreshJobs(ctx)
	if err != nil {
		return time.Time{}, err
	}
	return ends[name], nil
}

// jobActive says a job holds its nodes: running, or completing.
func jobActive(state []string) bool {
	return slices.ContainsFunc(state, func(s string) bool { return s == "RUNNING" || s == "COMPLETING" })
}

// jobEnding says a job holds nodes until a known end: the jobs whose end
// jobEnds reads.
func jobEnding(j restJob) bool {
	return jobActive(j.JobState) && j.EndTime.known() && j.TimeLimit.Set && !j.TimeLimit.Infinite
}

// errTooManyJobs says a job list names more nodes, a job at least one each,
// than one hostlist may.
var errTooManyJobs = fmt.Errorf("%w: more than %d running jobs with a known end", errHostlistTooLarge, maxHostlist)

// jobEnds is the latest end of the running jobs per node. All their
// hostlists together are held to one hostlist's bound: expanded at every
// call, as they once were, an answer of many lists of a million names each
// cost seconds of CPU per draining pod. Past the bound no end is known
// (an error says why); a list that does not parse is skipped.
func jobEnds(jobs []restJob) (map[string]time.Time, error) {
	ends := map[string]time.Time{}
	left := &budget{names: maxHostlist, bytes: maxHostlistBytes}
	for _, j := range jobs {
		if !jobEnding(j) {
			continue
		}
		hosts, err := expandHostlist(j.Nodes, left)
		if errors.Is(err, errHostlistTooLarge) {
			return nil, fmt.Errorf("the running jobs' node lists: %w", err)
		}
		end := time.Unix(j.EndTime.Number, 0)
		for _, h := range hosts {
			if end.After(ends[h]) {
				ends[h] = end
			}
		}
	}
	return ends, nil
}

func (r *REST) refreshJobs(ctx context.Context) (map[string]time.Time, error) {
	r.jobsMu.Lock()
	defer r.jobsMu.Unlock()
	// Only the jobs jobEnds reads are kept, and no more of them than the
	// names all their node lists may expand to (a job names a node at
	// least): 64 MiB of the smallest jobs would be some 20 million of
	// them, gigabytes kept whole.
	// They are charged to the budget as they are read, and their ends
	// replace them there once computed.
	var kept []restJob
	tooMany := false
	resp := restJobsResponse{job: func(j restJob) error {
		switch {
		case !jobEnding(j) || j.Nodes == "":
		case len(kept) == maxHostlist:
			tooMany = true
		default:
			if err := r.cfg.Budget.take(r.base, 1); err != nil {
				return err
			}
			kept = append(kept, j)
		}
		return nil
	}}
	status, err := r.getSince(ctx, "jobs/", r.jobsUpdate, &resp)
	defer r.cfg.Budget.give(r.base, len(kept))
	if status == http.StatusNotFound {
		r.jobsUpdate = 0 // another version next time: start afresh
	}
	if err != nil {
		return nil, err
	}
	if status != http.StatusNotModified {
		ends, endsErr := map[string]time.Time(nil), fmt.Errorf("the running jobs' node lists: %w", errTooManyJobs)
		if !tooMany {
			ends, endsErr = jobEnds(kept)
		}
		if r.jobsClosed {
			ends = nil
		} else if err := r.cfg.Budget.take(r.base, len(ends)); err != nil {
			ends, endsErr = nil, fmt.Errorf("the running jobs' ends: %w", err)
		}
		r.cfg.Budget.give(r.base, len(r.jobEnds))
		r.jobEnds, r.jobEndsErr = ends, endsErr
		r.jobsUpdate = 0
		if resp.LastUpdate.known() {
			r.jobsUpdate = resp.LastUpdate.Number
		}
	}
	return r.jobEnds, r.jobEndsErr
}
