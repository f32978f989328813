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
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// CRDs returns the embedded CRDs (controllers.slinky.slurm.net and
// restapis.slinky.slurm.net), sorted by name.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", name, err)
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
