package nodeset

import (
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

type completeFunc func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// nodeSetNames completes NodeSet names of the namespace; single says the
// command takes one name only.
func nodeSetNames(f util.Factory, single bool) completeFunc {
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
		list, err := c.SlinkyV1beta1().NodeSets(ns).List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		return completion.Filter(names, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// nodeSetPodNames completes the names of NodeSet pods (slurmd workers).
func nodeSetPodNames(f util.Factory) completeFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ns, _, err := f.Namespace()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		kc, err := f.KubeClient()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := kc.CoreV1().Pods(ns).List(cmd.Context(), metav1.ListOptions{
			LabelSelector: slinkyv1beta1.LabelAppName + "=" + slinkyv1beta1.AppName})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for i := range list.Items {
			names = append(names, list.Items[i].Name)
		}
		return completion.Filter(names, args, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}
