// Package completion implements 'kubectl vc completion' and the dynamic
// completion helpers commands use for names.
package completion

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// NewCmd returns the 'completion' command.
func NewCmd(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: templates.LongDesc(`
			Print a completion script for the given shell, for the command kubectl-vc. Names
			of queues, podgroups and nodesets are completed from the cluster.

			Completing 'kubectl vc ...' needs no script of its own: kubectl (1.26 and later) completes
			a plugin through the program kubectl_complete-vc on PATH, which every release
			archive and 'make build' provide beside kubectl-vc.`),
		Example: templates.Examples(`
			# Load completion into the current bash session
			source <(kubectl-vc completion bash)

			# zsh
			kubectl-vc completion zsh > "${fpath[1]}/_kubectl-vc"`),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(streams.Out, true)
			case "zsh":
				return root.GenZshCompletion(streams.Out)
			case "fish":
				return root.GenFishCompletion(streams.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(streams.Out)
			}
			return util.UsageErrorf("unknown shell %q: use bash, zsh, fish or powershell", args[0])
		},
	}
}
