// Command genconditions writes the NodeSet conditions table
// (pkg/rules/nodesetconditions) into the marked part of the Markdown file
// given as its argument (docs/nodeset.md); 'make docs' runs it, and
// pkg/rules/nodesetconditions' TestDocsTable fails while the two differ.
package main

import (
	"fmt"
	"os"

	conditions "github.com/kubectl-vc/kubectl-vc/pkg/rules/nodesetconditions"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genconditions FILE.md")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := conditions.ReplaceIn(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if out == string(b) {
		return nil
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
