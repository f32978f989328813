// Package slinkyoperator embeds the CRDs generated from our read-only types
// for kinds that belong to Slinky's slurm-operator (Controller, RestApi in
// slinky.slurm.net/v1beta1). kubectl-vc reads such objects but never
// installs their CRDs (Slinky's operator does), which is why they are kept
// apart from pkg/crds/bases, everything of which 'kubectl vc install'
// applies. They are meant for tests that need these kinds served
// (cptest.InstallSlinkyOperatorCRDs).
package slinkyoperator

import (
	"embed"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
)

//go:embed *.yaml
var files embed.FS

// CRDs returns the embedded CRDs (controllers.slinky.slurm.net and
// restapis.slinky.slurm.net), sorted by name.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return crds.Load(files, "*.yaml", true)
}
