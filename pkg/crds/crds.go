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
	sub, err := fs.Sub(files, "bases")
	if err != nil {
		return nil, err
	}
	return Load(sub, "*.yaml", true)
}

// Load parses the CRD manifests in fsys matching pattern, sorted by name.
// strict refuses fields the CRD type does not know (right for our own
// generated manifests; others' may carry newer fields).
func Load(fsys fs.FS, pattern string, strict bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	unmarshal := yaml.Unmarshal
	if strict {
		unmarshal = yaml.UnmarshalStrict
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := unmarshal(b, crd); err != nil {
			return nil, fmt.Errorf("CRD manifest %s: %w", name, err)
		}
		out = append(out, crd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
