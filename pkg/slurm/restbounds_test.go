package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// tinyNodesAnswer is a nodes answer of n of the smallest nodes a hostile
// server may send, each of its own name (test/hostile sends 1.9 million).
func tinyNodesAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"nodes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"n%x","state":["IDLE"]}`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestRESTRefusesTooManyNodes: a refresh keeps every node of its answer,
// so a node list is refused past maxNodes nodes, with an error that says
// so (it reaches the NodeSet's SlurmReachable as Refresh's error) and the
// cache left as it was; an answer of maxNodes nodes is kept, and what the
// cache holds for them stays within the memory maxNodes was chosen for.
// The single-node read (State) is held to the same bound.
func TestRESTRefusesTooManyNodes(t *testing.T) {
	full, over := tinyNodesAnswer(maxNodes), tinyNodesAnswer(maxNodes+1)
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44", Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c.version = "v0.0.44" // the server answers every path with body, pings too
	ctx := context.Background()

	live := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	body = full
	base := live()
	if err := c.Refresh(ctx); err != nil {
		t.Fatalf("an answer of %d nodes: %v", maxNodes, err)
	}
	if n := len(c.nodes); n != maxNodes {
		t.Fatalf("%d nodes kept of %d", n, maxNodes)
	}
	held := live() - base
	t.Logf("the cache holds %d nodes in %d MiB (%d bytes a node)", maxNodes, held>>20, held/maxNodes)
	// A quarter of serve's 256 MiB, twice over for the collector's
	// headroom (GOGC=100): the nodes' live cost at most 32 MiB.
	if held > 32<<20 {
		t.Fatalf("%d nodes hold %d MiB of heap: maxNodes no longer fits serve's budget", maxNodes, held>>20)
	}

	body = over
	err = c.Refresh(ctx)
	if !errors.Is(err, errTooManyNodes) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d nodes", maxNodes)) {
		t.Fatalf("an answer of %d nodes: %v, want it refused for its nodes", maxNodes+1, err)
	}
	if n := len(c.Nodes()); n != maxNodes {
		t.Fatalf("the refused answer changed the cache: %d nodes", n)
	}
	if _, err := c.State(ctx, "n0"); !errors.Is(err, errTooManyNodes) {
		t.Fatalf("State over an answer of %d nodes: %v, want it refused", maxNodes+1, err)
	}
}

// TestSkipRefusesDeepNesting: a value the client does not read is skipped
// a token at a time, and json.Decoder.Token keeps an entry per open
// bracket; past encoding/json's own nesting bound (json.Unmarshal refuses
// more than 10 000 levels) the skip refuses it too, early, and what it
// allocated stays small whatever the depth. Both sides of the bound agree
// with json.Unmarshal.
func TestSkipRefusesDeepNesting(t *testing.T) {
	deep := func(levels int) []byte {
		// the answer's object is one level, "meta"'s lists the rest
		return []byte(`{"nodes":[],"meta":` + strings.Repeat("[", levels-1) + strings.Repeat("]", levels-1) + `}`)
	}
	for _, levels := range []int{maxNesting, maxNesting + 1} {
		data := deep(levels)
		var got, want restNodesResponse
		errGot := decodeAnswer(bytes.NewReader(data), &got)
		errWant := json.Unmarshal(data, &want)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%d levels: streamed: %v; json.Unmarshal: %v", levels, errGot, errWant)
		}
		if levels > maxNesting && !errors.Is(errGot, errTooDeep) {
			t.Fatalf("%d levels: %v, want the nesting refused", levels, errGot)
		}
	}

	// 4 Mi levels: the decoder's stack alone would be 32 MiB and more.
	data := deep(4 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := decodeAnswer(bytes.NewReader(data), &restNodesResponse{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errTooDeep) {
		t.Fatalf("4 Mi levels: %v, want the nesting refused", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 4<<20 {
		t.Fatalf("skipping 4 Mi levels allocated %d MiB", a>>20)
	}
}
