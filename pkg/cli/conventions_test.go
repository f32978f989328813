package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// walk calls fn for every command of the tree under root.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walk(c, fn)
	}
}

// TestEveryFlagOfAKnownSetCompletes: -o of every command completes its
// formats, and the global flags complete as kubectl's do, instead of
// falling back to file names.
func TestEveryFlagOfAKnownSetCompletes(t *testing.T) {
	root := NewRootCmd(genericiooptions.NewTestIOStreamsDiscard(), Commands()...)
	for _, name := range []string{"namespace", "context", "cluster", "user"} {
		if _, ok := root.GetFlagCompletionFunc(name); !ok {
			t.Errorf("--%s does not complete", name)
		}
	}
	n := 0
	walk(root, func(c *cobra.Command) {
		if c.LocalFlags().Lookup("output") == nil {
			return
		}
		n++
		fn, ok := c.GetFlagCompletionFunc("output")
		if !ok {
			t.Errorf("%s: -o does not complete", c.CommandPath())
			return
		}
		if got, _ := fn(c, nil, ""); len(got) == 0 {
			t.Errorf("%s: -o completes nothing", c.CommandPath())
		}
	})
	if n < 10 {
		t.Fatalf("only %d commands with -o: the walk is broken", n)
	}
}

// TestUnknownCommandSuggests: every group answers a mistyped command in
// one line that names it and suggests the right one, as kubectl does.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"queue", "clsoe"}, `unknown command "clsoe" for "kubectl-vc queue"; did you mean "close"?`},
		{[]string{"qeueu"}, `unknown command "qeueu" for "kubectl-vc"; did you mean "queue"?`},
		{[]string{"job", "frobnicate"}, `unknown command "frobnicate" for "kubectl-vc job" (see`},
	} {
		var out, errOut bytes.Buffer
		code := Execute(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, tc.args, Commands()...)
		if code == 0 || !strings.Contains(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line with %q", tc.args, code, out.String(), errOut.String(), tc.want)
		}
	}
}

// TestHelpListsOwnFlags: a command's help lists its own flags and points
// to 'options' for the global ones, which 'options' lists.
func TestHelpListsOwnFlags(t *testing.T) {
	var out bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &out}
	if code := Execute(streams, []string{"queue", "list", "--help"}, Commands()...); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	help := out.String()
	if strings.Contains(help, "Global Flags") || strings.Contains(help, "--kubeconfig string") || !strings.Contains(help, "--selector") || !strings.Contains(help, "kubectl-vc options") {
		t.Errorf("queue list --help:\n%s", help)
	}
	out.Reset()
	if code := Execute(streams, []string{"options"}, Commands()...); code != 0 || !strings.Contains(out.String(), "--kubeconfig") || !strings.Contains(out.String(), "--namespace") {
		t.Errorf("options: exit %d\n%s", code, out.String())
	}
}
