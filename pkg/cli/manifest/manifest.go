// Package manifest is what every 'create -f FILE|-' shares: reading the
// file (or standard input), splitting it into its YAML or JSON documents,
// refusing a document of another kind than the command's, and decoding
// strictly (a misspelt field is an error naming its path). It reads and
// checks only: nothing is sent, so a file that fails here writes nothing.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned/scheme"
)

// Read reads filename ("-" is in) and returns its non-empty documents.
func Read(in io.Reader, filename string) ([][]byte, error) {
	var raw []byte
	var err error
	if filename == "-" {
		raw, err = io.ReadAll(in)
	} else {
		raw, err = os.ReadFile(filename)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, util.UsageErrorf("cannot read -f %s: %s", filename, pe.Err)
		}
		return nil, util.UsageErrorf("cannot read -f %s: %s", filename, util.Message(err))
	}
	docs, err := documents(raw)
	if err != nil {
		return nil, util.UsageErrorf("%s: %s", filename, util.Message(err))
	}
	if len(docs) == 0 {
		return nil, util.UsageErrorf("%s holds no object", filename)
	}
	return docs, nil
}

// Decode decodes doc, a document of filename (where names it in messages:
// the file, or "document 2 of the file"), into obj, after checking that
// it is of kind gvk.
func Decode(where string, doc []byte, gvk schema.GroupVersionKind, obj runtime.Object) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return util.UsageErrorf("%s is not YAML or JSON: %s", where, util.Message(err))
	}
	if tm.Kind != gvk.Kind || tm.APIVersion != gvk.GroupVersion().String() {
		return util.UsageErrorf("%s holds kind %q of apiVersion %q, not a %s %s", where, tm.Kind, tm.APIVersion, gvk.GroupVersion(), gvk.Kind)
	}
	decoder := serializerjson.NewSerializerWithOptions(serializerjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		serializerjson.SerializerOptions{Yaml: true, Strict: true})
	if _, _, err := decoder.Decode(doc, nil, obj); err != nil {
		return util.UsageErrorf("%s: %s", where, strings.TrimPrefix(util.Message(err), "strict decoding error: "))
	}
	return nil
}

// Where names document i (from 0) of n in filename, for messages.
func Where(filename string, i, n int) string {
	if n == 1 {
		return filename
	}
	return fmt.Sprintf("document %d of %s", i+1, filename)
}

// Prepare readies a decoded object for a create in namespace ns (given
// says -n was given): it takes ns unless the file names one, which must
// then be ns when -n was given; it must have a name that nameRule accepts
// (validation.IsDNS1123Label, ...) or a generateName; the fields the
// server sets are cleared, so that an exported object can be created
// again. kind names it in messages ("job", "jobflow").
func Prepare(obj metav1.Object, kind, where, ns string, given bool, nameRule func(string) []string) error {
	switch {
	case obj.GetNamespace() == "":
		obj.SetNamespace(ns)
	case given && obj.GetNamespace() != ns:
		return util.UsageErrorf("the %s in %s is in namespace %q, not %q (-n): drop -n or change the file", kind, where, obj.GetNamespace(), ns)
	}
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		return util.UsageErrorf("the %s in %s has no metadata.name", kind, where)
	}
	if n := obj.GetName(); n != "" {
		if errs := nameRule(n); len(errs) > 0 {
			return util.UsageErrorf("invalid %s name %q in %s: %s", kind, n, where, errs[0])
		}
	}
	obj.SetResourceVersion("")
	obj.SetUID("")
	obj.SetCreationTimestamp(metav1.Time{})
	obj.SetManagedFields(nil)
	return nil
}

// documents splits a YAML stream (or one JSON object) into its non-empty
// documents.
func documents(raw []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			out = append(out, doc)
		}
	}
}

// stripComments drops YAML comment lines and document markers, so a
// document of comments only counts as empty.
func stripComments(doc []byte) []byte {
	var keep [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' && string(t) != "---" {
			keep = append(keep, l)
		}
	}
	return bytes.Join(keep, []byte("\n"))
}

// Named reads the namespace and name of doc, a document that must be of
// kind gvk; nothing else of it is read ('delete -f' needs only which
// objects the file names).
func Named(where string, doc []byte, gvk schema.GroupVersionKind) (namespace, name string, err error) {
	var obj struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return "", "", util.UsageErrorf("%s is not YAML or JSON: %s", where, util.Message(err))
	}
	if obj.Kind != gvk.Kind || obj.APIVersion != gvk.GroupVersion().String() {
		return "", "", util.UsageErrorf("%s holds kind %q of apiVersion %q, not a %s %s", where, obj.Kind, obj.APIVersion, gvk.GroupVersion(), gvk.Kind)
	}
	if obj.Metadata.Name == "" {
		return "", "", util.UsageErrorf("%s names no object (no metadata.name)", where)
	}
	return obj.Metadata.Namespace, obj.Metadata.Name, nil
}
