package queue

import (
	"strings"
	"testing"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/badinput"
)

// TestBadInput runs the queue commands with input they must reject. Each
// case must exit non-zero, print exactly one line on stderr that names the
// problem (and where possible the fix), no Go error chain or stack trace,
// nothing on stdout, and leave the server unchanged (badinput.Run).
func TestBadInput(t *testing.T) {
	fresh(t)
	mustVC(t, "queue", "create", "e2e-bad")
	mustVC(t, "queue", "create", "e2e-bad-child", "--parent", "e2e-bad")
	long := strings.Repeat("a", 64)

	admin, alice, dead := env.admin, env.alice, env.dead
	cases := []badinput.Case{
		{"create: uppercase name", admin, []string{"queue", "create", "Team_A"}, `invalid queue name "Team_A"`},
		{"create: name too long", admin, []string{"queue", "create", long}, "invalid queue name"},
		{"create: no name", admin, []string{"queue", "create"}, "name the queue to create"},
		{"create: two names", admin, []string{"queue", "create", "a1", "a2"}, "give one queue name, got 2 (a1 a2)"},
		{"create: weight 0", admin, []string{"queue", "create", "w0", "--weight", "0"}, "invalid --weight 0"},
		{"create: negative weight", admin, []string{"queue", "create", "w0", "--weight", "-3"}, "invalid --weight -3"},
		{"create: weight too large", admin, []string{"queue", "create", "w0", "--weight", "70000"}, "between 1 and 65535"},
		{"create: weight not a number", admin, []string{"queue", "create", "w0", "--weight", "two"}, "invalid argument \"two\""},
		{"create: cpu=lots", admin, []string{"queue", "create", "r0", "--capability", "cpu=lots"}, "cpu=lots is not a quantity"},
		{"create: cpu=1000E", admin, []string{"queue", "create", "r0", "--capability", "cpu=1000E"}, "cannot be stored as written"},
		{"create: resource without value", admin, []string{"queue", "create", "r0", "--capability", "cpu"}, "NAME=QUANTITY"},
		{"create: resource without name", admin, []string{"queue", "create", "r0", "--deserved", "=4"}, "NAME=QUANTITY"},
		{"create: negative quantity", admin, []string{"queue", "create", "r0", "--deserved", "memory=-1Gi"}, "must not be negative"},
		{"create: bad resource name", admin, []string{"queue", "create", "r0", "--capability", "c p u=1"}, "resource name"},
		{"create: guarantee above deserved", admin, []string{"queue", "create", "r0", "--deserved", "cpu=2", "--guarantee", "cpu=4"}, "exceeds --deserved"},
		{"create: unknown state", admin, []string{"queue", "create", "s0", "--state", "Paused"}, `unknown --state "Paused"`},
		{"create: negative priority", admin, []string{"queue", "create", "p0", "--priority", "-1"}, "invalid --priority"},
		{"create: own parent", admin, []string{"queue", "create", "p0", "--parent", "p0"}, "its own parent"},
		{"create: missing parent", admin, []string{"queue", "create", "p0", "--parent", "nope"}, `parent queue "nope" not found`},
		{"create: exists", admin, []string{"queue", "create", "e2e-bad"}, "already exists"},
		{"create: unknown -o", admin, []string{"queue", "create", "o0", "-o", "table"}, "unknown output format"},
		{"create: bad --dry-run", admin, []string{"queue", "create", "d0", "--dry-run=maybe"}, "invalid --dry-run"},
		{"list: unknown -o", admin, []string{"queue", "list", "-o", "bogus"}, `unknown output format "bogus"`},
		{"list: empty custom-columns", admin, []string{"queue", "list", "-o", "custom-columns="}, "custom-columns needs a spec"},
		{"list: bad custom-columns", admin, []string{"queue", "list", "-o", "custom-columns=NAME"}, "HEADER:JSONPATH"},
		{"list: bad jsonpath", admin, []string{"queue", "list", "-o", "jsonpath={.items["}, "invalid output format"},
		{"list: bad selector", admin, []string{"queue", "list", "-l", "a=(b"}, "invalid --selector"},
		{"list: missing queue", admin, []string{"queue", "list", "nope"}, `queue "nope" not found`},
		{"list: unknown flag", admin, []string{"queue", "list", "--bogus"}, "unknown flag: --bogus"},
		{"queue: unknown verb", admin, []string{"queue", "frobnicate"}, `unknown command "frobnicate"`},
		{"describe: missing queue", admin, []string{"queue", "describe", "nope"}, `queue "nope" not found`},
		{"describe: bad name", admin, []string{"queue", "describe", "No/Way"}, "invalid queue name"},
		{"close: missing queue", admin, []string{"queue", "close", "nope"}, `queue "nope" not found`},
		{"close: one of two missing", admin, []string{"queue", "close", "e2e-bad", "nope"}, `queue "nope" not found`},
		{"close: root", admin, []string{"queue", "close", "root"}, `cannot close queue "root"`},
		{"open: root", admin, []string{"queue", "open", "root"}, `cannot open queue "root"`},
		{"close: no name", admin, []string{"queue", "close"}, "name the queue(s) to close"},
		{"close: duplicate name", admin, []string{"queue", "close", "e2e-bad", "e2e-bad"}, "named twice"},
		{"close: bad command namespace", admin, []string{"queue", "close", "e2e-bad", "--command-namespace", "Bad_NS"}, "invalid --command-namespace"},
		{"close: wait with dry run", admin, []string{"queue", "close", "e2e-bad", "--wait", "--dry-run=client"}, "--wait cannot be combined with --dry-run"},
		{"close: negative timeout", admin, []string{"queue", "close", "e2e-bad", "--wait", "--timeout", "-1s"}, "invalid --timeout"},
		{"close: unknown -o", admin, []string{"queue", "close", "e2e-bad", "-o", "wide"}, "unknown output format"},
		{"delete: default", admin, []string{"queue", "delete", "default"}, `cannot delete queue "default"`},
		{"delete: root", admin, []string{"queue", "delete", "root"}, `cannot delete queue "root"`},
		{"delete: missing", admin, []string{"queue", "delete", "e2e-bad", "nope"}, `queue "nope" not found`},
		{"update: nothing to change", admin, []string{"queue", "update", "e2e-bad"}, "nothing to update"},
		{"update: weight 0", admin, []string{"queue", "update", "e2e-bad", "--weight", "0"}, "invalid --weight 0"},
		{"update: cpu=lots", admin, []string{"queue", "update", "e2e-bad", "--capability", "cpu=lots"}, "not a quantity"},
		{"update: cpu=1000E", admin, []string{"queue", "update", "e2e-bad", "--deserved", "cpu=1000E"}, "cannot be stored as written (Kubernetes would store 1)"},
		{"update: huge exponent", admin, []string{"queue", "update", "e2e-bad", "--guarantee", "cpu=1e-2000000000"}, "exponent must be between -1000 and 1000"},
		{"create: 5000-digit quantity", admin, []string{"queue", "create", "e2e-bad-long", "--capability", "cpu=" + strings.Repeat("9", 5000)}, "the quantity of cpu is 5000 characters long; at most 100 are accepted"},
		{"create: stored exponent too large", admin, []string{"queue", "create", "e2e-bad-exp", "--capability", "cpu=100e1000"}, "would be stored as 1e1002"},
		{"update: own parent", admin, []string{"queue", "update", "e2e-bad", "--parent", "e2e-bad"}, "its own parent"},
		{"update: parent cycle", admin, []string{"queue", "update", "e2e-bad", "--parent", "e2e-bad-child"}, "cycle"},
		{"update: missing parent", admin, []string{"queue", "update", "e2e-bad", "--parent", "nope"}, `parent queue "nope" not found`},
		{"update: missing queue", admin, []string{"queue", "update", "nope", "--weight", "2"}, `queue "nope" not found`},
		{"update: guarantee above deserved", admin, []string{"queue", "update", "e2e-bad", "--deserved", "cpu=1", "--guarantee", "cpu=2"}, "exceeds --deserved"},
		{"rbac: list", alice, []string{"queue", "list"}, "forbidden"},
		{"rbac: create", alice, []string{"queue", "create", "alice-q"}, "forbidden"},
		{"rbac: close", alice, []string{"queue", "close", "e2e-bad"}, "forbidden"},
		{"rbac: delete", alice, []string{"queue", "delete", "e2e-bad"}, "forbidden"},
		{"unreachable: list", dead, []string{"queue", "list"}, "cannot reach the Kubernetes API server"},
		{"unreachable: close", dead, []string{"queue", "close", "e2e-bad"}, "cannot reach the Kubernetes API server"},
		{"unreachable: create", dead, []string{"queue", "create", "x0"}, "cannot reach the Kubernetes API server"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	badinput.Run(t, env.cli, env.vc, cases)
}
