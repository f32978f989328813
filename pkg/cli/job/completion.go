package job

import (
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

type completeFunc func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// jobNames completes the names of the jobs of the namespace (-n or the
// kubeconfig's); single says the command takes one name only. Errors
// complete nothing rather than print into the user's shell.
func jobNames(f util.Factory, single bool) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if single && len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, _, err := f.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := c.BatchV1alpha1().Jobs(ns).List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		return completion.Filter(names, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// flagJobNames adapts jobNames to a flag such as --job.
func flagJobNames(f util.Factory) completeFunc {
	names := jobNames(f, false)
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names(cmd, nil, toComplete)
	}
}

// phaseCompletion completes --phase.
func phaseCompletion() completeFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return completion.Filter(phaseNames(), nil, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}
