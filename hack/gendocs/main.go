// Command gendocs writes the command reference (one Markdown page per
// command) from the cobra tree into the directory given as its argument.
// 'make docs' runs it; 'make verify' checks the result is up to date.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra/doc"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs DIR")
		os.Exit(2)
	}
	// Flag defaults derived from the environment (the kubeconfig cache
	// under $HOME) must not make the reference differ between machines.
	_ = os.Setenv("HOME", "~")
	_ = os.Unsetenv("SLURM_CONF")
	root := cli.NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), cli.Commands()...)
	root.DisableAutoGenTag = true
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	if err := doc.GenMarkdownTree(root, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
