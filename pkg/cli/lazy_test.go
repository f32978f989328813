package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestLazyGroupsChangeNothing: a run that builds only the command groups
// its command line needs (pendingGroups.addFor) prints and exits exactly as
// one that builds them all: the help of every command, 'help', the root's
// help and suggestions, errors, the completion scripts and the completion
// of command and flag names.
func TestLazyGroupsChangeNothing(t *testing.T) {
	// Nothing here may reach a cluster.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	lines := [][]string{
		nil, {"--help"}, {"help"}, {"qeueu"}, {"queue", "clsoe"}, {"queue"}, {"job", "frobnicate"},
		{"-n", "x", "queue", "--help"}, {"--kubeconfig=/none", "queue", "list", "--help"},
		{"queue", "list", "--no-such-flag"}, {"version", "--client"}, {"options"},
		{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"completion", "powershell"},
		{"__complete", ""}, {"__complete", "qu"}, {"__complete", "queue", ""}, {"__complete", "queue", "list", "--"},
		{"__complete", "-n"}, {"__complete", "help", ""}, {"__complete", "help", "queue", ""},
		{"__completeNoDesc", "job", ""}, {"__complete", "nodeset", "sc"}, {"__complete", "serve", "--feature-g"},
	}
	walk(NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), Commands()...), func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		lines = append(lines, append(append([]string{}, path...), "--help"), append([]string{"help"}, path...))
	})
	run := func(args []string, lazy bool) string {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
		code := execute(context.Background(), streams, args, Commands(), lazy)
		return "exit " + string(rune('0'+code)) + "\nstdout:\n" + out.String() + "\nstderr:\n" + errOut.String()
	}
	for _, args := range lines {
		if eager, lazy := run(args, false), run(args, true); lazy != eager {
			t.Errorf("%q: built lazily:\n%s\nbuilt whole:\n%s", args, lazy, eager)
		}
	}
	if len(lines) < 100 {
		t.Fatalf("only %d command lines: the walk is broken", len(lines))
	}
}
