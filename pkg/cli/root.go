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

// Subcommand builds one top-level command group. Packages that add groups
// (queue, podgroup, serve, ...) are wired in NewRootCmd's list.
type Subcommand func(f util.Factory, streams genericiooptions.IOStreams) *cobra.Command

// NewRootCmd returns the root command. It presents itself as "kubectl vc"
// in help and usage when kubectl started it as its plugin (see
// StartedByKubectl), as "kubectl-vc" otherwise. The command's name stays
// kubectl-vc either way: completion scripts are written for that name.
func NewRootCmd(streams genericiooptions.IOStreams, extra ...Subcommand) *cobra.Command {
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
	for _, sub := range extra {
		cmd.AddCommand(sub(f, streams))
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
	return cmd
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
	cmd := NewRootCmd(streams, extra...)
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
