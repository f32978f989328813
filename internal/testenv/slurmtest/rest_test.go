package slurmtest_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/slurmtest"
)

// TestREST checks each Slurm version's slurmrestd the way a REST client
// sees it, with net/http only.
func TestREST(t *testing.T) {
	for _, s := range slurmtest.RESTSuites {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			c := slurmtest.StartRESTT(t, s, "kvc-0", "kvc-1", "kvc-2")
			t.Logf("started in %v at %s", time.Since(start).Round(time.Millisecond), c.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			token, err := c.Token(ctx, "slurm", 10*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			const api = "/slurm/v0.0.42"
			get := func(path, token string) (int, []byte, error) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+api+path, nil)
				if err != nil {
					return 0, nil, err
				}
				if token != "" {
					req.Header.Set("X-SLURM-USER-TOKEN", token)
				}
				resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
				if err != nil {
					return 0, nil, err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return resp.StatusCode, b, err
			}
			mustGet := func(path string, want int) []byte {
				t.Helper()
				code, b, err := get(path, token)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				if code != want {
					t.Fatalf("GET %s: HTTP %d, want %d: %s", path, code, want, b)
				}
				return b
			}
			nodeStates := func() map[string][]string {
				t.Helper()
				var r struct {
					Nodes []struct {
						Name  string   `json:"name"`
						State []string `json:"state"`
					} `json:"nodes"`
				}
				if err := json.Unmarshal(mustGet("/nodes/", http.StatusOK), &r); err != nil {
					t.Fatal(err)
				}
				m := map[string][]string{}
				for _, n := range r.Nodes {
					m[n.Name] = n.State
				}
				return m
			}

			mustGet("/ping/", http.StatusOK)
			if code, b, err := get("/ping/", signHS256(t, c.JWTKey, "slurm")); err != nil || code != http.StatusOK {
				t.Errorf("GET /ping/ with a token signed with JWTKey: HTTP %d, %v, want 200: %s", code, err, b)
			}
			if code, b, err := get("/ping/", ""); err != nil || code != http.StatusUnauthorized {
				t.Fatalf("GET /ping/ without a token: HTTP %d, %v, want 401: %s", code, err, b)
			}
			nodes := nodeStates()
			for _, n := range []string{"kvc-0", "kvc-1", "kvc-2"} {
				if st := nodes[n]; !slices.Equal(st, []string{"IDLE"}) {
					t.Errorf("node %s: state %v, want [IDLE] (all: %v)", n, st, nodes)
				}
			}
			if len(nodes) != 3 {
				t.Errorf("nodes: %v, want kvc-0, kvc-1, kvc-2", nodes)
			}

			submitted := time.Now()
			id, err := c.Submit(ctx, "kvc-1", 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("job %s running after %v", id, time.Since(submitted).Round(time.Millisecond))
			if st := nodeStates()["kvc-1"]; len(st) == 0 || st[0] != "ALLOCATED" {
				t.Errorf("kvc-1 with a job: state %v, want ALLOCATED", st)
			}
			var jobs struct {
				Jobs []struct {
					JobID    int      `json:"job_id"`
					Nodes    string   `json:"nodes"`
					JobState []string `json:"job_state"`
				} `json:"jobs"`
			}
			if err := json.Unmarshal(mustGet("/jobs/", http.StatusOK), &jobs); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, j := range jobs.Jobs {
				if strconv.Itoa(j.JobID) == id {
					found = true
					if j.Nodes != "kvc-1" || !slices.Equal(j.JobState, []string{"RUNNING"}) {
						t.Errorf("job %s: nodes %q, state %v, want kvc-1, [RUNNING]", id, j.Nodes, j.JobState)
					}
				}
			}
			if !found {
				t.Errorf("job %s not in /jobs/: %+v", id, jobs.Jobs)
			}

			cancelled := time.Now()
			if err := c.Cancel(ctx, id); err != nil {
				t.Fatal(err)
			}
			st := nodeStates()["kvc-1"]
			t.Logf("kvc-1 %v after Cancel (%v)", st, time.Since(cancelled).Round(time.Millisecond))
			if !slices.Equal(st, []string{"IDLE"}) {
				t.Errorf("kvc-1 after Cancel: state %v, want [IDLE]", st)
			}

			c.StopRestd()
			if code, _, err := get("/ping/", token); err == nil {
				t.Errorf("GET /ping/ with slurmrestd stopped: HTTP %d, want an error", code)
			}
			restarted := time.Now()
			if err := c.StartRestd(ctx); err != nil {
				t.Fatal(err)
			}
			t.Logf("slurmrestd back after %v", time.Since(restarted).Round(time.Millisecond))
			mustGet("/ping/", http.StatusOK)
		})
	}
}

// signHS256 makes the kind of token a REST client signs itself with the
// cluster's key.
func signHS256(t *testing.T, key []byte, user string) string {
	t.Helper()
	now := time.Now().Unix()
	claims, err := json.Marshal(map[string]any{"iat": now, "exp": now + 600, "sun": user})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	msg := enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc(claims)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msg))
	return msg + "." + enc(mac.Sum(nil))
}
