package jobflow

import "github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"

// deleteHelp is the help of 'jobflow delete'.
var deleteHelp = kind.Help{
	Short: "Delete job flows",
	Long: `
			Delete JobFlows. Every flow is looked up first, so a missing one fails the
			command before anything is deleted. The Volcano Jobs made for the flow's steps
			are owned by it and removed after it by the garbage collector; its JobTemplates
			stay. With --wait, wait until the flows are gone.`,
	Example: `
			# Delete a flow (and, through the garbage collector, its jobs)
			kubectl vc jobflow delete pipeline

			# The flows a file created, as kubectl delete -f and vcctl's delete -f
			kubectl vc jobflow delete -f pipeline.yaml

			# As vcctl names it, waiting until it is gone
			kubectl vc jobflow delete -N pipeline -n research --wait`,
}
