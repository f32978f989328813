package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSinfoRefusesTooManyNodes: the commands client keeps every node sinfo
// --json lists, as the REST client keeps every node of its answer, so it
// is held to the same bound with the same error: an answer of maxNodes
// nodes is kept whole, one more is refused (Refresh's error, which reaches
// the NodeSet's SlurmReachable) and the cache is left as it was.
func TestSinfoRefusesTooManyNodes(t *testing.T) {
	full, over := tinyNodesAnswer(maxNodes), tinyNodesAnswer(maxNodes+1)
	// A sinfo that prints the answer a file holds.
	dir := t.TempDir()
	answer := filepath.Join(dir, "answer.json")
	script := "#!/bin/sh\nexec cat " + answer + "\n"
	for _, name := range Programs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCommands(CommandsConfig{BinDir: dir})
	if err := os.WriteFile(answer, full, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh of %d nodes: %v", maxNodes, err)
	}
	if err := os.WriteFile(answer, over, 0o644); err != nil {
		t.Fatal(err)
	}
	err := c.Refresh(context.Background())
	if !errors.Is(err, errTooManyNodes) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d nodes", maxNodes)) {
		t.Fatalf("Refresh of %d nodes: %v, want it refused for its nodes", maxNodes+1, err)
	}
	if n := len(c.Nodes()); n != maxNodes {
		t.Fatalf("after the refused answer the cache holds %d nodes, want the %d it held", n, maxNodes)
	}
	t.Logf("refused: %v", err)
}
