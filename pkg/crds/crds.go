// Package crds embeds the CustomResourceDefinitions generated from pkg/apis,
// so that 'kubectl vc install' and the tests apply exactly what the types say.
package crds

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var files embed.FS

// Raw returns the YAML of every embedded CRD, keyed by file name.
func Raw() (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(files, "bases", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		out[d.Name()] = b
		return nil
	})
	return out, err
}

// All returns the embedded CRDs, sorted by name.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	raw, err := Raw()
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for name, b := range raw {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", name, err)
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
