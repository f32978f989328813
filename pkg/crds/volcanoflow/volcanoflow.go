// Package volcanoflow embeds the CRDs generated from our types for
// Volcano's flow.volcano.sh/v1alpha1 kinds, JobFlow and JobTemplate.
// Volcano installs them together with its jobflow and jobtemplate
// controllers, which turn them into Volcano Jobs; kubectl-vc serve has
// neither, so 'kubectl vc install' never installs these CRDs and they are
// kept apart from pkg/crds/bases (everything of which install applies and
// doctor expects). 'kubectl vc doctor' says whether the cluster serves
// them; tests that need them served apply them (or Volcano's own).
package volcanoflow

import (
	"embed"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

//go:embed *.yaml
var files embed.FS

// CRDs returns the embedded CRDs (jobflows.flow.volcano.sh and
// jobtemplates.flow.volcano.sh), sorted by name.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return crds.Load(files, "*.yaml", true)
}
