package nodeset

import (
	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is Slinky's NodeSet.
var Kind = &kind.Kind[slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSetList]{
	Name: "NodeSet", Example: "compute",
	GVK: slinkyv1beta1.NodeSetKind,
	Client: func(c versioned.Interface, ns string) kind.Client[*slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSetList] {
		return c.SlinkyV1beta1().NodeSets(ns)
	},
	Table:  nodeSetTable,
	Header: describeHeader,
	Page:   newDescribePage,
	Group: kind.Group{Use: "nodeset", Aliases: []string{"nodesets", "nss"}, Help: kind.Help{
		Short: "Manage Slinky NodeSets (Slurm compute nodes as pods)",
		Long: `
				Inspect and operate Slinky NodeSets: sets of pods that are Slurm compute
				nodes. Pods leave a NodeSet only after their Slurm node is drained: scale
				and cordon ask for that; the NodeSet controller ('kubectl vc serve') does it.`,
		Example: `
				# NodeSets of the current namespace with their Slurm node states
				kubectl vc nodeset list

				# Remove two compute nodes once their jobs have finished
				kubectl vc nodeset scale compute --replicas 8

				# Stop new jobs on one node
				kubectl vc nodeset cordon compute-3`,
	}},
	Help: kind.Helps{Describe: describeHelp},
}
