package podgroup

import (
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is the Volcano podgroup.
var Kind = &kind.Kind[schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroupList]{
	Name: "podgroup", Example: "my-job -n batch",
	GVK: schedulingv1beta1.SchemeGroupVersion.WithKind("PodGroup"),
	Client: func(c versioned.Interface, ns string) kind.Client[*schedulingv1beta1.PodGroup, *schedulingv1beta1.PodGroupList] {
		return c.SchedulingV1beta1().PodGroups(ns)
	},
	Table:    podGroupTable,
	Describe: describePodGroup,
	Why:      "podgroup",
	Help:     kind.Helps{Describe: describeHelp},
	Group: kind.Group{Use: "podgroup", Aliases: []string{"podgroups", "pg"}, Help: kind.Help{
		Short: "Inspect Volcano podgroups",
		Long: `
				List and describe Volcano podgroups: the gangs of pods the scheduler admits together.`,
		Example: `
				# Podgroups of every namespace in queue team-a
				kubectl vc podgroup list -A --queue team-a

				# One podgroup with its member pods and events
				kubectl vc pg describe my-job -n batch`,
	}},
}

// validateName checks a podgroup name given on the command line.
func validateName(n string) error { return Kind.ValidateName(n) }
