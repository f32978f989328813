package hypernode

import (
	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// notServed is what to do when the server has no HyperNodes.
const notServed = "the server has no HyperNodes (topology.volcano.sh/v1alpha1): install Volcano, or 'kubectl vc install --crds'"

// Kind is Volcano's HyperNode. Its table is list.go's: it reads nodes and
// pods to resolve members and sum resources.
var Kind = &kind.Kind[topologyv1alpha1.HyperNode, *topologyv1alpha1.HyperNode, *topologyv1alpha1.HyperNodeList]{
	Name: "hypernode", Words: "HyperNode", Example: "rack-1",
	GVK:           topologyv1alpha1.SchemeGroupVersion.WithKind("HyperNode"),
	ClusterScoped: true,
	Client: func(c versioned.Interface, _ string) kind.Client[*topologyv1alpha1.HyperNode, *topologyv1alpha1.HyperNodeList] {
		return c.TopologyV1alpha1().HyperNodes()
	},
	NotServed: notServed,
	Describe:  describeHyperNode,
	Help:      kind.Helps{Describe: describeHelp},
	Group: kind.Group{Use: "hypernode", Aliases: []string{"hypernodes", "hn"}, Help: kind.Help{
		Short: "Inspect Volcano's network topology (HyperNodes)",
		Long: `
				List, draw and describe Volcano's HyperNodes: the tiers of switches, racks or
				blocks that network-topology-aware scheduling keeps a job inside. Members
				(exact names, regular expressions, node labels) are resolved against the real
				nodes as Volcano's scheduler resolves them, and the defects that make it skip
				every job with a network-topology constraint (a HyperNode with two parents, a
				cycle) are named where they are.`,
		Example: `
				# HyperNodes with their nodes and idle resources
				kubectl vc hypernode list

				# The tree from the top, nodes as leaves, defects on their lines
				kubectl vc hn tree

				# One HyperNode's members, nodes and the podgroups placed under it
				kubectl vc hn describe rack-1`,
	}},
}

// validateName checks a HyperNode name given on the command line.
func validateName(n string) error { return Kind.ValidateName(n) }
