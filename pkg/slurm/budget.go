package slurm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// DefaultNodeBudget is the entries every REST client of one serve may keep
// together: twice the nodes one answer may list, which is what a single
// client holds at its worst (its cache beside the refresh that replaces
// it), so that any number of slurmrestd servers cost serve no more than
// one did before the budget. Every client has its own answers' bounds
// (maxNodes, maxHostlist); without a budget shared by them all, each
// slurmrestd a tenant names would add its own ~28 MiB of cache.
const DefaultNodeBudget = 2 * maxNodes

// ErrBudgetSpent is wrapped by the error of a refresh that found the
// shared budget spent: the client keeps what it had and asks again later.
var ErrBudgetSpent = errors.New("serve's budget of Slurm nodes and jobs is spent")

// NodeBudget bounds what every client given it keeps at once: the nodes of
// their caches and of the refreshes in flight, and the jobs and job ends
// they keep for drain deadlines. Each entry is charged as it is decoded,
// so an answer that does not fit is refused part way, before it costs
// more; a client gives its entries back when they are replaced or it is
// closed. The zero value is not usable; a nil *NodeBudget bounds nothing.
type NodeBudget struct {
	mu    sync.Mutex
	limit int
	used  int
	// held is what each client holds, by its URL: a refusal names the
	// largest holders, so that an administrator finds the slurmrestd
	// whose answers fill the budget.
	held map[string]int
}

// NewNodeBudget returns a budget of limit entries (DefaultNodeBudget when limit
// is not positive).
func NewNodeBudget(limit int) *NodeBudget {
	if limit <= 0 {
		limit = DefaultNodeBudget
	}
	return &NodeBudget{limit: limit, held: map[string]int{}}
}

// Limit is the entries the budget allows.
func (b *NodeBudget) Limit() int { return b.limit }

// Used is the entries held now.
func (b *NodeBudget) Used() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// take charges n entries to holder, or refuses them all.
func (b *NodeBudget) take(holder string, n int) error {
	if b == nil || n <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return &budgetError{limit: b.limit, used: b.used, holder: holder, largest: b.largest(3)}
	}
	b.used += n
	b.held[holder] += n
	return nil
}

// give returns n entries holder took.
func (b *NodeBudget) give(holder string, n int) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, b.held[holder])
	b.used -= n
	if b.held[holder] -= n; b.held[holder] == 0 {
		delete(b.held, holder)
	}
}

// largest names the k holders that hold the most, most first (under mu).
func (b *NodeBudget) largest(k int) []string {
	holders := slices.SortedFunc(maps.Keys(b.held), func(x, y string) int {
		if d := b.held[y] - b.held[x]; d != 0 {
			return d
		}
		return strings.Compare(x, y)
	})
	var out []string
	for _, h := range holders[:min(k, len(holders))] {
		out = append(out, fmt.Sprintf("%s %d", h, b.held[h]))
	}
	return out
}

type budgetError struct {
	limit, used int
	holder      string
	largest     []string
}

func (e *budgetError) Error() string {
	return fmt.Sprintf("%v: the Slurm clients hold %d of %d nodes and jobs (the most: %s), no room for more from %s; "+
		"it is read again at the next sync", ErrBudgetSpent, e.used, e.limit, strings.Join(e.largest, ", "), e.holder)
}

func (e *budgetError) Unwrap() error { return ErrBudgetSpent }
