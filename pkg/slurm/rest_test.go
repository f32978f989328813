package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestExpandHostlist(t *testing.T) {
	cases := map[string][]string{
		"kvc-1":                {"kvc-1"},
		"kvc-[0-1,3]":          {"kvc-0", "kvc-1", "kvc-3"},
		"n[08-10],login":       {"n08", "n09", "n10", "login"},
		"r[1-2]-n[1-2]":        {"r1-n1", "r1-n2", "r2-n1", "r2-n2"},
		"a,b[1-2],c":           {"a", "b1", "b2", "c"},
		"":                     nil,
		"web-[0-1].example[2]": {"web-0.example2", "web-1.example2"},
	}
	for in, want := range cases {
		got, err := ExpandHostlist(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ExpandHostlist(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"n[1-", "n]1", "n[3-1]", "n[a-b]", "n[[1]]", "n[0-99999999]"} {
		if got, err := ExpandHostlist(bad); err == nil {
			t.Errorf("ExpandHostlist(%q) = %d names, want an error", bad, len(got))
		}
	}
}

func TestSignedTokenClaimsAndRenewal(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	src, err := NewSignedToken(key, "")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	src.now = func() time.Time { return now }
	tok, err := src.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(func() time.Time { return now }))
	if err != nil || !parsed.Valid {
		t.Fatalf("token does not verify with the key: %v", err)
	}
	if claims["sun"] != "slurm" || claims["iat"] != float64(now.Unix()) || claims["exp"] != float64(now.Add(15*time.Minute).Unix()) {
		t.Fatalf("claims %v", claims)
	}
	if _, ok := claims["nbf"]; !ok {
		t.Fatal("no nbf claim")
	}
	// Reused until 3 minutes before the end, then renewed.
	now = now.Add(11 * time.Minute)
	if again, _ := src.Token(context.Background()); again != tok {
		t.Fatal("token renewed too early")
	}
	now = now.Add(time.Minute + time.Second)
	if again, _ := src.Token(context.Background()); again == tok {
		t.Fatal("token not renewed 12 minutes in")
	}
	if _, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return []byte("another key, also thirty-two bytes"), nil }); err == nil {
		t.Fatal("token verifies with another key")
	}
	if _, err := NewSignedToken([]byte(" \n"), ""); err == nil {
		t.Fatal("empty key accepted")
	}
}

func TestFileTokenRereadOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("SLURM_JWT=first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := NewFileToken(path)
	if tok, err := src.Token(context.Background()); err != nil || tok != "first" {
		t.Fatalf("got %q, %v", tok, err)
	}
	if err := os.WriteFile(path, []byte("second-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := src.Token(context.Background()); err != nil || tok != "second-token" {
		t.Fatalf("after change got %q, %v", tok, err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Token(context.Background()); err == nil {
		t.Fatal("empty token file accepted")
	}
	if _, err := NewFileToken(filepath.Join(t.TempDir(), "none")).Token(context.Background()); err == nil {
		t.Fatal("missing token file accepted")
	}
}

// fakeRestd serves one API version the way slurmrestd answers (a stand-in
// for the pure client logic; the real slurmrestd is tested in test/nodeset).
type fakeRestd struct {
	version string
	// failSince answers update_time as Slurm 24.11 does: HTTP 500.
	failSince bool
	token     string
	requests  atomic.Int32
	updates   atomic.Int32
	last      atomic.Value // last request URI
}

func (f *fakeRestd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.last.Store(r.Method + " " + r.URL.RequestURI())
	switch tok := r.Header.Get("X-SLURM-USER-TOKEN"); {
	case tok == "":
		w.WriteHeader(http.StatusUnauthorized)
		return
	case tok != f.token:
		w.WriteHeader(http.StatusNetworkAuthenticationRequired)
		_, _ = w.Write([]byte(`{"errors":[{"description":"","error_number":1007,"error":"Protocol authentication error"}]}`))
		return
	}
	prefix := "/slurm/" + f.version + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		http.NotFound(w, r)
		return
	}
	switch p := strings.TrimPrefix(r.URL.Path, prefix); {
	case p == "ping/":
		_, _ = w.Write([]byte(`{"pings":[{"pinged":"UP"}]}`))
	case p == "nodes/":
		if f.failSince && r.URL.Query().Has("update_time") {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"errors":[{"description":"Unable to query partitions","error_number":-1}]}`))
			return
		}
		if r.URL.Query().Get("update_time") == "100" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write([]byte(`{"nodes":[{"name":"kvc-0","state":["IDLE"],"reason":""},
			{"name":"kvc-1","state":["ALLOCATED","DRAIN"],"reason":"kubectl-vc: scale-in"}],
			"last_update":{"set":true,"infinite":false,"number":100}}`))
	case p == "node/kvc-1" && r.Method == http.MethodGet:
		_, _ = w.Write([]byte(`{"nodes":[{"name":"kvc-1","state":["IDLE","DRAIN"],"reason":"kubectl-vc: scale-in"}]}`))
	case p == "node/kvc-0" && r.Method == http.MethodGet:
		_, _ = w.Write([]byte(`{"nodes":[{"name":"kvc-0","state":["IDLE"],"reason":""}]}`))
	case strings.HasPrefix(p, "node/") && r.Method == http.MethodGet:
		_, _ = w.Write([]byte(`{"nodes":null,"errors":[{"description":"node not found","error_number":2018}]}`))
	case p == "node/kvc-0" && r.Method == http.MethodPost:
		var u map[string]any
		if json.NewDecoder(r.Body).Decode(&u) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.updates.Add(1)
		_, _ = w.Write([]byte(`{}`))
	case strings.HasPrefix(p, "node/"):
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"errors":[{"description":"Invalid node name specified","error_number":2018,"error":"Invalid node name specified"}]}`))
	case p == "jobs/":
		_, _ = w.Write([]byte(`{"jobs":[
			{"job_id":1,"job_state":["RUNNING"],"nodes":"kvc-[0-1,3]","end_time":{"set":true,"infinite":false,"number":2000},"time_limit":{"set":true,"infinite":false,"number":10}},
			{"job_id":2,"job_state":["RUNNING"],"nodes":"kvc-1","end_time":{"set":true,"infinite":false,"number":3000},"time_limit":{"set":true,"infinite":false,"number":60}},
			{"job_id":3,"job_state":["RUNNING"],"nodes":"kvc-3","end_time":{"set":true,"infinite":false,"number":99999999},"time_limit":{"set":false,"infinite":true,"number":0}},
			{"job_id":4,"job_state":["COMPLETED"],"nodes":"kvc-0","end_time":{"set":true,"infinite":false,"number":5000},"time_limit":{"set":true,"infinite":false,"number":60}}],
			"last_update":{"set":true,"infinite":false,"number":7}}`))
	default:
		http.NotFound(w, r)
	}
}

func newFake(t *testing.T, version string) (*fakeRestd, *httptest.Server) {
	f := &fakeRestd{version: version, token: "good"}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

type staticToken string

func (s staticToken) Token(context.Context) (string, error) { return string(s), nil }

func TestRESTNegotiatesAndReads(t *testing.T) {
	ctx := context.Background()
	f, srv := newFake(t, "v0.0.42")
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good")})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.Version(ctx); err != nil || v != "v0.0.42" {
		t.Fatalf("negotiated %q, %v", v, err)
	}
	// v0.0.45, .44, .43 answered 404, .42 200.
	if n := f.requests.Load(); n != 4 {
		t.Fatalf("%d requests to negotiate, want 4", n)
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	st, ok := c.Node("kvc-1")
	if !ok || st.Base != "allocated" || !st.Drain() || !st.Busy() || st.String() != "DRAINING (kubectl-vc: scale-in)" {
		t.Fatalf("kvc-1 = %+v", st)
	}
	// The next refresh sends update_time and keeps the cache on 304.
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if last := f.last.Load().(string); last != "GET /slurm/v0.0.42/nodes/?update_time=100" {
		t.Fatalf("second refresh sent %s", last)
	}
	if len(c.Nodes()) != 2 {
		t.Fatalf("cache lost on 304: %v", c.Nodes())
	}
	if drained, err := c.IsDrained(ctx, "kvc-1"); err != nil || !drained {
		t.Fatalf("IsDrained(kvc-1) = %v, %v", drained, err)
	}
	if drained, err := c.IsDrained(ctx, "ghost"); err != nil || !drained {
		t.Fatalf("IsDrained(ghost) = %v, %v: an unknown node runs nothing", drained, err)
	}
	if err := c.Drain(ctx, "kvc-0", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Undrain(ctx, "kvc-0"); err != nil || f.updates.Load() != 2 {
		t.Fatalf("undrain: %v, %d updates", err, f.updates.Load())
	}
	if err := c.Drain(ctx, "ghost", "x"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("drain of an unknown node: %v", err)
	}
	// kvc-1 is drained already (Slurm says so, asked afresh): its drain
	// and reason stay, no update is sent.
	if err := c.Drain(ctx, "kvc-1", "kubectl-vc: pod cordoned"); err != nil || f.updates.Load() != 2 {
		t.Fatalf("drain of a drained node: %v, %d updates (want none more)", err, f.updates.Load())
	}
	// kvc-1 runs jobs 1 (ends 2000) and 2 (3000); kvc-3 runs job 1 and an
	// unlimited one (no end of its own); kvc-0 job 1 and a completed one.
	for node, want := range map[string]int64{"kvc-1": 3000, "kvc-0": 2000, "kvc-3": 2000, "kvc-2": 0} {
		got, err := c.JobEndDeadline(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		if (want == 0) != got.IsZero() || (want != 0 && got.Unix() != want) {
			t.Errorf("JobEndDeadline(%s) = %v, want %d", node, got, want)
		}
	}
}

// TestRESTUpdateTimeRefused: a server that fails update_time (Slurm 24.11)
// is asked again at once without it, and never with it again.
func TestRESTUpdateTimeRefused(t *testing.T) {
	ctx := context.Background()
	f, srv := newFake(t, "v0.0.42")
	f.failSince = true
	c, _ := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.42"})
	for i := 0; i < 3; i++ {
		if err := c.Refresh(ctx); err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		if len(c.Nodes()) != 2 {
			t.Fatalf("refresh %d: %v", i, c.Nodes())
		}
	}
	// ping, then: a plain GET; update_time refused and a plain GET; a plain GET.
	if n := f.requests.Load(); n != 5 {
		t.Fatalf("%d requests, want 5", n)
	}
	if last := f.last.Load().(string); last != "GET /slurm/v0.0.42/nodes/" {
		t.Fatalf("last request %s", last)
	}
}

func TestRESTErrors(t *testing.T) {
	ctx := context.Background()
	_, srv := newFake(t, "v0.0.44")
	bad, _ := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("expired")})
	err := bad.Refresh(ctx)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "HTTP 511") ||
		!strings.Contains(err.Error(), "Protocol authentication error") {
		t.Fatalf("wrong token: %v", err)
	}
	none, _ := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("")})
	if err := none.Ping(ctx); !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("no token: %v", err)
	}
	pinned, _ := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.40"})
	if err := pinned.Ping(ctx); err == nil || !strings.Contains(err.Error(), "does not serve the pinned API version v0.0.40") {
		t.Fatalf("pinned to an unserved version: %v", err)
	}
	for _, cfg := range []RESTConfig{{URL: "10.0.0.1:6820", Token: staticToken("x")}, {URL: srv.URL},
		{URL: srv.URL, Token: staticToken("x"), Version: "v0.0.39"}} {
		if _, err := NewREST(cfg); err == nil {
			t.Errorf("NewREST(%+v) accepted", cfg)
		}
	}
	// Answers that are not slurmrestd's say what they say.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no endpoints available for service \"slurm-restapi\"","code":503}`))
	}))
	defer proxy.Close()
	viaProxy, _ := NewREST(RESTConfig{URL: proxy.URL, Token: staticToken("good"), Version: "v0.0.42"})
	if err := viaProxy.Ping(ctx); err == nil || !strings.Contains(err.Error(), `HTTP 503: Service Unavailable; no endpoints available for service "slurm-restapi"`) {
		t.Fatalf("through a proxy without endpoints: %v", err)
	}
	srv.Close()
	gone, _ := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good")})
	if err := gone.Refresh(ctx); err == nil || errors.Is(err, ErrUnauthorized) {
		t.Fatalf("closed server: %v", err)
	}
}

func TestRESTNumberForms(t *testing.T) {
	var n struct{ A, B, C restNumber }
	if err := json.Unmarshal([]byte(`{"A":5,"B":{"set":true,"infinite":true,"number":0},"C":null}`), &n); err != nil {
		t.Fatal(err)
	}
	if !n.A.known() || n.A.Number != 5 || n.B.known() || n.C.known() {
		t.Fatalf("%+v", n)
	}
	var l struct{ S, L stringList }
	if err := json.Unmarshal([]byte(`{"S":"RUNNING","L":["IDLE","DRAIN"]}`), &l); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.S, stringList{"RUNNING"}) || len(l.L) != 2 {
		t.Fatalf("%+v", l)
	}
}

func TestKeyFileTokenFollowsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jwt.key")
	first, second := []byte("first key, thirty-two bytes long!"), []byte("second key, thirty-two bytes long")
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := NewKeyFileToken(path, "")
	if err != nil {
		t.Fatal(err)
	}
	verifies := func(tok string, key []byte) bool {
		_, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return key, nil }, jwt.WithValidMethods([]string{"HS256"}))
		return err == nil
	}
	tok, err := src.Token(context.Background())
	if err != nil || !verifies(tok, first) {
		t.Fatalf("first token: %v", err)
	}
	// A rotated key (a Secret volume updated in place) is used at once.
	if err := os.WriteFile(path, second, 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err = src.Token(context.Background())
	if err != nil || !verifies(tok, second) || verifies(tok, first) {
		t.Fatalf("after rotation: %v", err)
	}
	if _, err := NewKeyFileToken(filepath.Join(t.TempDir(), "none"), ""); err == nil {
		t.Fatal("a missing key file accepted")
	}
}

// TestRESTRefusesHugeAnswers: an answer larger than maxAnswer is refused
// with an error naming the bound, however it is sent (a known length or
// chunked), and no more than the bound is read of it.
func TestRESTRefusesHugeAnswers(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// A JSON string that never ends: valid so far at every byte.
		chunk := []byte(strings.Repeat("n", 1<<20))
		if _, err := w.Write([]byte(`{"nodes":[{"name":"`)); err != nil {
			return
		}
		for range 2 * maxAnswer >> 20 {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	r, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44"})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("Refresh of a %d MiB answer: %v", 2*maxAnswer>>20, err)
	}
	srv.Close() // waits for the handler: its writes failed once serve hung up
	if n := sent.Load(); n >= 2*maxAnswer {
		t.Fatalf("the whole %d MiB answer was read", n>>20)
	}
}
