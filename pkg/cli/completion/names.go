package completion

import (
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// QueueNames completes queue names from the cluster, for positional
// arguments and for flags such as --queue and --parent. Names already on
// the command line are not offered again. Errors complete nothing rather
// than printing into the user's shell.
func QueueNames(f util.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := c.SchedulingV1beta1().Queues().List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		return Filter(names, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// PodGroupNames completes podgroup names in the namespace of -n (or the
// kubeconfig's).
func PodGroupNames(f util.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ns, _, err := f.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := c.SchedulingV1beta1().PodGroups(ns).List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		return Filter(names, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// FlagQueueNames adapts QueueNames to a flag (flags have no "already
// given" arguments to skip).
func FlagQueueNames(f util.Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	names := QueueNames(f)
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return names(cmd, nil, toComplete)
	}
}

// Filter keeps the names that start with prefix and are not already given
// on the command line: what a shell offers next.
func Filter(names, given []string, prefix string) []string {
	skip := map[string]bool{}
	for _, g := range given {
		skip[g] = true
	}
	var out []string
	for _, n := range names {
		if !skip[n] && strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
