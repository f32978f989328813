package jobtemplate

import "github.com/kubectl-vc/kubectl-vc/pkg/cli/kind"

// deleteHelp is the help of 'jobtemplate delete'.
var deleteHelp = kind.Help{
	Short: "Delete job templates",
	Long: `
			Delete JobTemplates. Every template is looked up first, so a missing one fails
			the command before anything is deleted. Jobs already made from a template are
			left alone (they belong to their JobFlow); a JobFlow step that names a deleted
			template gets no job until the template is back. With --wait, wait until the
			templates are gone.`,
	Example: `
			# Delete a template
			kubectl vc jobtemplate delete preprocess

			# The templates a file created, as kubectl delete -f and vcctl's delete -f
			kubectl vc jobtemplate delete -f templates.yaml

			# As vcctl names it, waiting until it is gone
			kubectl vc jobtemplate delete -N preprocess -n research --wait`,
}
