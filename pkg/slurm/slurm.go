// Package slurm is the NodeSet controller's view of a Slurm cluster: the few
// node operations it needs to drain a compute node before its pod goes away.
// The interface is small on purpose: two clients implement it, one over
// slurmrestd's REST API (rest.go, as Slinky's operator reaches Slurm) and
// one with the scontrol, sinfo and squeue commands (commands.go).
package slurm

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrNodeNotFound is returned for a node Slurm does not know.
var ErrNodeNotFound = errors.New("slurm node not found")

// Client is what the NodeSet controller asks of Slurm. Node names are the
// hostnames of NodeSet pods.
type Client interface {
	// Refresh reloads the node cache read by Node and Nodes.
	Refresh(ctx context.Context) error
	// Nodes returns the cached nodes by name.
	Nodes() map[string]NodeState
	// Node returns one cached node; ok is false if Slurm does not know it.
	Node(name string) (state NodeState, ok bool)
	// Drain stops new jobs from landing on the node; running jobs go on.
	// A node Slurm reports drained already (asked, not the cache: an
	// administrator may have drained it since the last Refresh) keeps its
	// drain and reason.
	Drain(ctx context.Context, name, reason string) error
	// Undrain makes a drained node schedulable again. It is a no-op for a
	// node that is not drained.
	Undrain(ctx context.Context, name string) error
	// IsDrained asks Slurm (not the cache) whether the node is drained and
	// runs no job, i.e. whether its pod can be deleted without killing work.
	// A node Slurm does not know runs nothing, so it counts as drained.
	IsDrained(ctx context.Context, name string) (bool, error)
	// JobEndDeadline is the latest end time of the jobs running on the node;
	// zero when none runs.
	JobEndDeadline(ctx context.Context, name string) (time.Time, error)
}

// NodeState is a node's base state (lower case, as Slurm prints it: idle,
// allocated, mixed, down, unknown, ...), its flags (DRAIN, NOT_RESPONDING,
// ...) and the reason an administrator or controller gave.
type NodeState struct {
	Name   string
	Base   string
	Flags  []string
	Reason string
}

// Busy says whether jobs run on the node.
func (s NodeState) Busy() bool {
	switch s.Base {
	case "allocated", "mixed", "completing":
		return true
	}
	return slices.Contains(s.Flags, "COMPLETING")
}

// Drain says whether the node is marked DRAIN (draining or drained).
func (s NodeState) Drain() bool { return slices.Contains(s.Flags, "DRAIN") }

// Drained says the node is marked DRAIN and runs nothing any more.
func (s NodeState) Drained() bool { return s.Drain() && !s.Busy() }

// Idle says the node is up and runs nothing.
func (s NodeState) Idle() bool { return s.Base == "idle" }

// Down says the node is unusable.
func (s NodeState) Down() bool { return s.Base == "down" || s.Base == "fail" }

// String is the state the way sinfo's %T prints it: "draining", "drained",
// or the base state, with the reason of a drained or down node. A reason
// on any other node is stale (Slurm 24.11 keeps it after an undrain).
func (s NodeState) String() string {
	st := s.Base
	switch {
	case s.Drain() && s.Busy():
		st = "draining"
	case s.Drain():
		st = "drained"
	}
	st = strings.ToUpper(st)
	if s.Reason != "" && (s.Drain() || s.Down()) {
		st += " (" + s.Reason + ")"
	}
	return st
}

// nodeCache is the node states a client read last, shared by its
// goroutines: both clients keep one and answer Nodes and Node from it.
// Its nodes are charged to budget (nil for the commands: serve runs one
// such client), as many as the map holds.
type nodeCache struct {
	mu     sync.RWMutex
	nodes  map[string]NodeState
	budget *NodeBudget
	holder string
	// closed: the client was dropped; what it reads is given back.
	closed bool
}

// replace makes nodes the cache; charged entries were taken from the
// budget for them while they were read (an answer may list a name twice).
func (c *nodeCache) replace(nodes map[string]NodeState, charged int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.budget.give(c.holder, charged)
		return
	}
	c.budget.give(c.holder, len(c.nodes)+charged-len(nodes))
	c.nodes = nodes
}

// put updates one node, as just read. A node new to the cache is charged;
// when the budget has no room it is not kept (the next refresh reads it).
func (c *nodeCache) put(s NodeState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes == nil {
		c.nodes = map[string]NodeState{}
	}
	if _, ok := c.nodes[s.Name]; !ok && (c.closed || c.budget.take(c.holder, 1) != nil) {
		return
	}
	c.nodes[s.Name] = s
}

// close gives the cache's nodes back to the budget and keeps none after.
func (c *nodeCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.budget.give(c.holder, len(c.nodes))
	c.nodes, c.closed = nil, true
}

// Nodes implements Client.
func (c *nodeCache) Nodes() map[string]NodeState {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.nodes)
}

// Node implements Client.
func (c *nodeCache) Node(name string) (NodeState, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.nodes[name]
	return s, ok
}
