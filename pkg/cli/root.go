// Package cli assembles the kubectl-vc command tree.
package cli

import (
	"context"
	"fmt"
	"os"
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

// NewRootCmd returns the root command. The binary's name decides how it
// presents itself: "kubectl vc" when run as a kubectl plugin.
func NewRootCmd(streams genericiooptions.IOStreams, extra ...Subcommand) *cobra.Command {
	name := "kubectl-vc"
	if isPlugin() {
		name = "kubectl vc"
	}
	cmd := &cobra.Command{
		Use:   name,
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
	if isPlugin() {
		// Shown as "kubectl vc" in usage lines.
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

// isPlugin reports whether kubectl started us through plugin discovery.
func isPlugin() bool {
	return strings.HasPrefix(filepath.Base(os.Args[0]), "kubectl-") && os.Getenv("KUBECTL_PLUGINS_CALLER") != ""
}
