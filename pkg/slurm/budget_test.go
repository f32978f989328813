package slurm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// budgetServer is a slurmrestd stand-in answering its node list with nodes
// tiny nodes and its job list with one running job on each of jobNodes.
func budgetServer(t *testing.T, budget *NodeBudget, nodes int, jobNodes string) *REST {
	t.Helper()
	answer := tinyNodesAnswer(nodes)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/slurm/v0.0.44/nodes/":
			_, _ = w.Write(answer)
		case "/slurm/v0.0.44/jobs/":
			_, _ = w.Write([]byte(`{"jobs":[{"job_id":1,"job_state":["RUNNING"],"nodes":"` + jobNodes +
				`","end_time":{"set":true,"number":2000},"time_limit":{"set":true,"number":60}}]}`))
		case "/slurm/v0.0.44/node/fresh":
			_, _ = w.Write([]byte(`{"nodes":[{"name":"fresh","state":["IDLE"]}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := NewREST(RESTConfig{URL: srv.URL, Token: staticToken("good"), Version: "v0.0.44", Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	c.version = "v0.0.44"
	return c
}

// TestNodeBudgetSharedByClients (issue 42): every REST client of a serve
// charges what it keeps to one budget, so that the slurmrestd servers
// tenants name cost no more together than the budget, however many they
// are. A refresh that does not fit is refused part way, with an error
// naming the largest holders, and the client keeps its last nodes; a
// closed client gives everything back.
func TestNodeBudgetSharedByClients(t *testing.T) {
	ctx := context.Background()
	b := NewNodeBudget(3000)
	a := budgetServer(t, b, 1000, "n[0-9]")
	c := budgetServer(t, b, 1000, "n0")
	d := budgetServer(t, b, 1000, "n0")
	used := func(want int, when string) {
		t.Helper()
		if got := b.Used(); got != want {
			t.Fatalf("%s: the budget holds %d, want %d", when, got, want)
		}
	}
	for _, cl := range []*REST{a, c} {
		if err := cl.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	used(2000, "two clients of 1000 nodes")
	// Its old cache beside the new answer: 3000, which fits.
	if err := a.Refresh(ctx); err != nil {
		t.Fatalf("a refresh within the budget: %v", err)
	}
	used(2000, "a cache replaced")
	if err := d.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	used(3000, "three clients of 1000 nodes")

	err := a.Refresh(ctx)
	if !errors.Is(err, ErrBudgetSpent) || !strings.Contains(err.Error(), "3000 of 3000") ||
		!strings.Contains(err.Error(), a.URL()) {
		t.Fatalf("a refresh past the budget: %v; want ErrBudgetSpent naming the holders", err)
	}
	if len(a.Nodes()) != 1000 {
		t.Fatalf("the refused refresh changed the cache: %d nodes", len(a.Nodes()))
	}
	used(3000, "after a refused refresh (what it read is given back)")

	// A job end is charged too, and refused when there is no room.
	if _, err := a.JobEndDeadline(ctx, "n0"); !errors.Is(err, ErrBudgetSpent) {
		t.Fatalf("job ends past the budget: %v", err)
	}
	if _, ok := a.Node("fresh"); ok {
		t.Fatal("fresh is cached before it is read")
	}
	if _, err := a.State(ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Node("fresh"); ok {
		t.Fatal("a node read past the budget was cached")
	}

	c.Close()
	used(2000, "a client closed")
	if err := a.Refresh(ctx); err != nil {
		t.Fatalf("a refresh after a client gave its nodes back: %v", err)
	}
	end, err := a.JobEndDeadline(ctx, "n3")
	if err != nil || end.Unix() != 2000 {
		t.Fatalf("JobEndDeadline(n3) = %v, %v", end, err)
	}
	used(2010, "1000 nodes and 10 job ends, and d's 1000")
	if _, err := a.State(ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Node("fresh"); !ok {
		t.Fatal("a node read within the budget was not cached")
	}
	used(2011, "a node read once")

	a.Close()
	d.Close()
	used(0, "every client closed")
	// A closed client reads on (a sync may still hold it) but keeps nothing.
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.JobEndDeadline(ctx, "n0"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.State(ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
	used(0, "a closed client read again")
}

// TestNodeBudgetNilBoundsNothing: a client without a budget (the commands,
// tests) keeps what its answers' own bounds allow.
func TestNodeBudgetNilBoundsNothing(t *testing.T) {
	var b *NodeBudget
	if err := b.take("x", 1<<30); err != nil || b.Used() != 0 {
		t.Fatalf("nil budget: %v, %d", err, b.Used())
	}
	c := budgetServer(t, nil, 100, "n0")
	if err := c.Refresh(context.Background()); err != nil || len(c.Nodes()) != 100 {
		t.Fatalf("refresh without a budget: %v, %d nodes", err, len(c.Nodes()))
	}
	if NewNodeBudget(0).Limit() != 2*maxNodes {
		t.Fatal("the default budget is not twice the nodes one answer may list")
	}
}
