package completion

import (
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// RegisterGlobalFlags completes the flags every command takes, as kubectl
// completes them: -n with the cluster's namespaces, --context, --cluster
// and --user with the kubeconfig's entries.
func RegisterGlobalFlags(root *cobra.Command, f util.Factory) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.KubeClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := c.CoreV1().Namespaces().List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for _, ns := range list.Items {
			names = append(names, ns.Name)
		}
		return Filter(names, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	kubeconfig := func(entries func(contexts, clusters, users []string) []string) Func {
		return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			cfg, err := f.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return Filter(entries(sortedKeys(cfg.Contexts), sortedKeys(cfg.Clusters), sortedKeys(cfg.AuthInfos)), nil, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = root.RegisterFlagCompletionFunc("context", kubeconfig(func(ctx, _, _ []string) []string { return ctx }))
	_ = root.RegisterFlagCompletionFunc("cluster", kubeconfig(func(_, cl, _ []string) []string { return cl }))
	_ = root.RegisterFlagCompletionFunc("user", kubeconfig(func(_, _, u []string) []string { return u }))
}

// Fixed completes a flag with values, those starting with what is typed.
func Fixed(values ...string) Func {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return Filter(values, nil, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
