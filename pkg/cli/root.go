// Package cli assembles the kubectl-vc command tree.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/version"
)

// Subcommand builds one top-level command: Cmd builds the command itself
// and, for a command group ('queue', 'job', ...), Subs the commands under
// it. Packages that add commands are wired in Commands' list.
type Subcommand struct {
	Cmd  func(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command
	Subs func(f util.Factory, streams genericiooptions.IOStreams) []*cobra.Command
}

// NewRootCmd returns the root command with every command under it. It
// presents itself as "kubectl vc" in help and usage when kubectl started
// it as its plugin (see StartedByKubectl), as "kubectl-vc" otherwise. The
// command's name stays kubectl-vc either way: completion scripts are
// written for that name.
func NewRootCmd(streams genericiooptions.IOStreams, extra ...Subcommand) *cobra.Command {
	cmd, groups := newRootCmd(streams, extra)
	groups.addAll()
	return cmd
}

// newRootCmd returns the root command with the groups' own commands, and
// what builds the commands under each group.
func newRootCmd(streams genericiooptions.IOStreams, extra []Subcommand) (*cobra.Command, pendingGroups) {
	cmd := &cobra.Command{
		Use:   "kubectl-vc",
		Short: "Manage Volcano queues and podgroups, and run their controllers",
		Long: templates.LongDesc(`
			kubectl-vc manages Volcano queues, podgroups and Commands (and Slinky NodeSets)
			with kubectl's conventions, and runs their controllers with 'serve'.

			It works as the kubectl plugin 'kubectl vc' or standalone as 'kubectl-vc'.`),
		SilenceUsage:  true,
		SilenceErrors: true,
		// cobra's own default completion command is replaced by ours.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	if len(os.Args) > 0 && StartedByKubectl(os.Args[0], exec.LookPath) {
		// Usage lines, help and error hints say "kubectl vc ...".
		cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl vc"}
	}
	flags := genericclioptions.NewConfigFlags(true).WithDeprecatedPasswordFlag().WithDiscoveryBurst(300).WithDiscoveryQPS(50.0)
	flags.AddFlags(cmd.PersistentFlags())
	f := util.NewFactory(flags)

	cmd.AddCommand(version.NewCmd(f, streams))
	cmd.AddCommand(completion.NewCmd(streams))
	var groups pendingGroups
	for _, sub := range extra {
		c := sub.Cmd(f, streams)
		if sub.Subs != nil {
			groups = append(groups, pendingGroup{cmd: c, subs: func() []*cobra.Command { return sub.Subs(f, streams) }})
		}
		cmd.AddCommand(c)
	}
	cmd.AddCommand(newOptionsCmd())
	// An unknown command is refused in one line with suggestions, at the
	// root as in every group.
	util.Group(cmd)
	// Help lists a command's own flags; the global ones (kubeconfig,
	// context, namespace, ...) once, under 'kubectl vc options', as
	// kubectl does. cobra's template is kept otherwise (kubectl's own
	// templater names the root by its command name, not "kubectl vc").
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), globalFlagsSection, optionsHint, 1))
	completion.RegisterGlobalFlags(cmd, f)
	return cmd, groups
}

// pendingGroups are command groups whose commands are not built yet.
//
// A run builds the commands of the group its command line names and no
// others. Building all of them (about 80 commands: their flags, printers,
// and help rendered from markdown by kubectl's templates) was most of what
// main did in a 'version --client': measured over 81 alternating runs on
// the 2-core machine, building only what is needed took its median wall
// time from 17.5 to 15.8 ms, its CPU time from 19.2 to 17.1 ms and its
// peak RSS from 39.6 to 38.1 MiB (the pages of code and data it no longer
// touches). What a run shows is the same either way
// (TestLazyGroupsChangeNothing): a command sees nothing of the other
// groups' commands, and whatever looks at more than one group (the root's
// help and suggestions, 'help') gets them all.
type pendingGroups []pendingGroup

type pendingGroup struct {
	cmd  *cobra.Command
	subs func() []*cobra.Command
}

// addAll builds the commands of every group.
func (p pendingGroups) addAll() {
	for _, g := range p {
		g.cmd.AddCommand(g.subs()...)
	}
}

// addFor builds the commands of the groups a run of root with args
// needs: those of the group args name (cobra's own search, over the
// root's commands and flags, which are all there), none when args name
// another command of the root ('version', 'serve', ...), and all of them
// when args name none ('help', an unknown command, the root itself). The
// completion of a command line ('__complete' and the words) needs what
// running it would.
func (p pendingGroups) addFor(root *cobra.Command, args []string) {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		// Completing 'queue close <TAB>' needs the queue commands alone.
		args = args[1:]
	}
	c, _, err := root.Find(args)
	if err == nil && c != root {
		for _, g := range p {
			if g.cmd == c {
				g.cmd.AddCommand(g.subs()...)
				return
			}
		}
		return
	}
	p.addAll()
}

// globalFlagsSection is the part of cobra's usage template that lists the
// inherited flags; optionsHint replaces it.
const (
	globalFlagsSection = `{{if .HasAvailableInheritedFlags}}

Global Flags:
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}`
	optionsHint = `{{if .HasAvailableInheritedFlags}}

Use "{{.Root.DisplayName}} options" for the flags every command takes (--kubeconfig, --context, --namespace, ...).{{end}}`
)

// newOptionsCmd is 'options': the flags every command takes.
func newOptionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "options",
		Short: "Print the flags every command takes",
		Long: templates.LongDesc(`
			Print the flags every command takes: which cluster to talk to and as whom
			(--kubeconfig, --context, --namespace, ...). Each command's help lists only
			its own flags.`),
		Example: templates.Examples(`
			kubectl vc options`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Usage() },
	}
	templates.UseOptionsTemplates(cmd)
	return cmd
}

// Execute is ExecuteContext with a context that is never cancelled.
func Execute(streams genericiooptions.IOStreams, args []string, extra ...Subcommand) int {
	return ExecuteContext(context.Background(), streams, args, extra...)
}

// ExecuteContext runs the root command with ctx (every command's
// cmd.Context(), never nil) and returns the process exit code. Errors are printed as one line
// on stderr.
func ExecuteContext(ctx context.Context, streams genericiooptions.IOStreams, args []string, extra ...Subcommand) int {
	return execute(ctx, streams, args, extra, true)
}

// execute is ExecuteContext; lazy builds only the command groups args
// need (pendingGroups.addFor), otherwise all of them.
func execute(ctx context.Context, streams genericiooptions.IOStreams, args []string, extra []Subcommand, lazy bool) int {
	cmd, groups := newRootCmd(streams, extra)
	if lazy {
		groups.addFor(cmd, args)
	} else {
		groups.addAll()
	}
	cmd.SetArgs(args)
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	// cobra reports flag errors itself; make them one line too.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return util.UsageErrorf("%s (see '%s --help')", err.Error(), c.CommandPath())
	})
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(streams.ErrOut, "error: "+util.Message(err))
		return 1
	}
	return 0
}

// StartedByKubectl reports whether argv0 (the process's os.Args[0]) is how
// kubectl starts its plugin kubectl-vc. kubectl sets no variable for its
// plugins (KUBECTL_PLUGINS_CALLER went with the old plugin system in 1.12);
// it looks the plugin up on PATH and starts it with that path as argv[0]
// (DefaultPluginHandler in k8s.io/kubectl/pkg/cmd). A shell started by hand
// passes the name as typed: "kubectl-vc" when found on PATH, or a path
// such as ./bin/kubectl-vc. So the binary is kubectl's plugin when it is
// named kubectl-vc and argv0 is exactly what a PATH lookup of that name
// gives. The one run by hand that looks the same is typing the full path
// PATH would give, which is then shown as "kubectl vc" too.
func StartedByKubectl(argv0 string, lookPath func(string) (string, error)) bool {
	base := filepath.Base(argv0)
	if strings.TrimSuffix(base, ".exe") != "kubectl-vc" || base == argv0 {
		return false
	}
	found, err := lookPath(base)
	// kubectl takes a path relative to a relative PATH entry (Go's
	// exec.ErrDot), and so does this.
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return false
	}
	return found == argv0
}
