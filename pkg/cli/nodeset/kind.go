package nodeset

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Kind is Slinky's NodeSet.
var Kind = &kind.Kind[slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSetList]{
	Name: "NodeSet", Words: "NodeSet", Example: "compute",
	GVK:      slinkyv1beta1.NodeSetKind,
	NameRule: validation.IsDNS1123Subdomain,
	Client: func(c versioned.Interface, ns string) kind.Client[*slinkyv1beta1.NodeSet, *slinkyv1beta1.NodeSetList] {
		return c.SlinkyV1beta1().NodeSets(ns)
	},
	AsList: func(items []slinkyv1beta1.NodeSet, rv string) runtime.Object {
		return &slinkyv1beta1.NodeSetList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: items}
	},
	Table: nodeSetTable,
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
}
