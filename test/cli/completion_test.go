package cli

import (
	"strings"
	"testing"
)

// TestCompletion asks the binary for completions as the shell scripts do:
// one name completer for every kind (queue names as arguments and for
// --parent and --queue, podgroup names in their namespace).
func TestCompletion(t *testing.T) {
	deleteQueuesAfter(t, "e2e-comp-one", "e2e-comp-two")
	mustVC(t, "queue", "create", "e2e-comp-one")
	mustVC(t, "queue", "create", "e2e-comp-two")
	r := mustVC(t, "__complete", "queue", "close", "e2e-comp-one", "e2e-comp")
	if !strings.Contains(r.Stdout, "e2e-comp-two") || strings.Contains(r.Stdout, "e2e-comp-one\n") {
		t.Errorf("positional completion:\n%s", r.Stdout)
	}
	r = mustVC(t, "__complete", "queue", "create", "x", "--parent", "e2e-comp-")
	if !strings.Contains(r.Stdout, "e2e-comp-one") || !strings.Contains(r.Stdout, "e2e-comp-two") {
		t.Errorf("--parent completion:\n%s", r.Stdout)
	}
	makePodGroups(t)
	r = mustVC(t, "__complete", "pg", "describe", "-n", "e2e-pg", "tr")
	if !strings.HasPrefix(r.Stdout, "train\n") || strings.Contains(r.Stdout, "eval") {
		t.Errorf("podgroup completion:\n%s", r.Stdout)
	}
	r = mustVC(t, "__complete", "pg", "list", "--queue", "e2e-comp-t")
	if !strings.HasPrefix(r.Stdout, "e2e-comp-two\n") {
		t.Errorf("--queue completion:\n%s", r.Stdout)
	}
}
