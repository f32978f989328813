// Package manifests embeds the YAML that 'kubectl vc install' applies besides
// the CRDs: admission policies (policies/) and what 'serve' needs to run in a
// cluster (serve/). Each *.yaml file may hold several documents.
package manifests

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed policies serve servicemonitor
var files embed.FS

// Set names a directory of embedded manifests.
type Set string

const (
	// Policies are the ValidatingAdmissionPolicies and their bindings,
	// the QueueIndexes and the index mode's queue webhook configuration.
	Policies Set = "policies"
	// Serve is the ServiceAccount, RBAC, Deployment, metrics Service and
	// queue webhook Service of 'serve'.
	Serve Set = "serve"
	// ServiceMonitor is the Prometheus Operator's ServiceMonitor for
	// serve's metrics.
	ServiceMonitor Set = "servicemonitor"
)

// The Deployment of 'serve' (serve/20-deployment.yaml) and its container,
// whose image 'kubectl vc install' sets when it renders the set.
const (
	ServeDeployment = keys.ServeName
	ServeContainer  = "serve"
	// ServeMetricsService is the Service in front of serve's metrics port
	// (serve/20-deployment.yaml): its self-signed certificate names it.
	ServeMetricsService = keys.ServeName + "-metrics"
	// ImageRepository is where the image of kubectl-vc is published
	// ('make image' names it so too); the tag is the binary's version.
	ImageRepository = "ghcr.io/kubectl-vc/kubectl-vc"
)

// Raw returns the concatenated YAML of a set, files in name order.
func Raw(set Set) ([]byte, error) {
	entries, err := fs.ReadDir(files, string(set))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, n := range names {
		b, err := files.ReadFile(path.Join(string(set), n))
		if err != nil {
			return nil, err
		}
		if buf.Len() > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// Objects returns the objects of a set, in file and document order.
func Objects(set Set) ([]*unstructured.Unstructured, error) {
	raw, err := Raw(set)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, fmt.Errorf("manifests %s: %w", set, err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// PolicyObjects returns the policy set of one admission mode
// (keys.AdmissionModeIndex or keys.AdmissionModePerQueue): the objects
// labelled with that mode and those that belong to every mode. Both modes
// name their policies alike, so a switch is an apply of the other set.
func PolicyObjects(mode string) ([]*unstructured.Unstructured, error) {
	if mode != keys.AdmissionModeIndex && mode != keys.AdmissionModePerQueue {
		return nil, fmt.Errorf("unknown admission mode %q: use %s or %s", mode, keys.AdmissionModeIndex, keys.AdmissionModePerQueue)
	}
	all, err := Objects(Policies)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, u := range all {
		if m, ok := u.GetLabels()[keys.AdmissionMode]; !ok || m == mode {
			out = append(out, u)
		}
	}
	return out, nil
}
