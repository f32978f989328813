package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	batchv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/batch/v1alpha1"
	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	flowv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/flow/v1alpha1"
	schedv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	topologyv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/topology/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds"
	"github.com/kubectl-vc/kubectl-vc/pkg/crds/volcanoflow"
)

// TestGeneratedCRDsMatchUpstreamSchemas compares our generated CRDs with
// Volcano's, descriptions aside: same names, scope, subresources, printer
// columns and validation. A field or marker that drifts fails here.
func TestGeneratedCRDsMatchUpstreamSchemas(t *testing.T) {
	ours, err := crds.All()
	if err != nil {
		t.Fatal(err)
	}
	// JobFlow and JobTemplate are generated apart (install leaves them to
	// Volcano) but must match upstream's all the same.
	flowOurs, err := volcanoflow.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	ours = append(ours, flowOurs...)
	upstream, err := crds.LoadDir(cptest.UpstreamCRDs(t, "volcano-crds"))
	if err != nil {
		t.Fatal(err)
	}
	// Slinky's directory also holds its Controller and RestApi CRDs; we
	// model only what we read of those and never install them (see
	// slinkyoperator_test.go): only the NodeSet is compared here.
	slinky, err := crds.LoadDir(cptest.UpstreamCRDs(t, "slinky-crds"))
	if err != nil {
		t.Fatal(err)
	}
	// JobFlow and JobTemplate come with Volcano's jobflow controllers, from
	// a directory of their own.
	flow, err := crds.LoadDir(cptest.UpstreamCRDs(t, "volcano-flow-crds"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range append(append(upstream, slinky...), flow...) {
		byName[c.Name] = c
	}
	// kubectl-vc's own kind (the admission queue index) has no upstream
	// counterpart to match.
	own := 0
	for _, c := range ours {
		if c.Spec.Group == admissionv1alpha1.GroupName {
			own++
		}
	}
	if len(ours)-own != 8 || own != 1 {
		t.Fatalf("expected 8 generated CRDs of Volcano's and Slinky's (5 Volcano with the HyperNode, 1 Slinky NodeSet, 2 Volcano flow) and 1 of ours, got %d and %d", len(ours)-own, own)
	}
	for _, c := range ours {
		if c.Spec.Group == admissionv1alpha1.GroupName {
			continue
		}
		up := byName[c.Name]
		if up == nil {
			t.Errorf("%s has no upstream counterpart", c.Name)
			continue
		}
		a, b := specWithoutDescriptions(t, c), specWithoutDescriptions(t, up)
		// A Job's task templates (also in a JobTemplate's spec and a
		// JobFlow step's patch) are core/v1 PodTemplateSpecs, whose schema
		// is that of the Kubernetes release each side was generated
		// against: ours must hold every field of upstream's, the same way,
		// and may hold fields of a newer release. The rest of the CRD must
		// be identical.
		oursT, upT := cutTaskPodSpecs(a), cutTaskPodSpecs(b)
		if len(oursT) != len(upT) {
			t.Errorf("%s: %d task pod templates in ours, %d in upstream's", c.Name, len(oursT), len(upT))
		}
		for path, up := range upT {
			for _, d := range schemaCovers(oursT[path], up, path) {
				t.Errorf("%s: the task pod template does not cover upstream's: %s", c.Name, d)
			}
		}
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.MarshalIndent(a, "", " ")
			jb, _ := json.MarshalIndent(b, "", " ")
			t.Errorf("%s differs from upstream.\nours:\n%s\nupstream:\n%s", c.Name, ja, jb)
		}
	}
}

func specWithoutDescriptions(t *testing.T, c *apiextensionsv1.CustomResourceDefinition) any {
	b, err := json.Marshal(c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return stripKey(v, "description")
}

func stripKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if k != key {
				out[k] = stripKey(val, key)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = stripKey(x[i], key)
		}
		return out
	}
	return v
}

// cutTaskPodSpecs removes the schema of the pod spec of every task
// template (tasks[].template.spec, wherever a Job spec is embedded) from
// spec (a CRD spec decoded as JSON) and returns them by path.
func cutTaskPodSpecs(spec any) map[string]any {
	out := map[string]any{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if tasks, ok := x["tasks"].(map[string]any); ok {
				if props := dig(tasks, "items", "properties", "template", "properties"); props != nil && props["spec"] != nil {
					out[path+".tasks.template.spec"] = props["spec"]
					delete(props, "spec")
				}
			}
			for k, val := range x {
				walk(val, path+"."+k)
			}
		case []any:
			for i := range x {
				walk(x[i], fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(spec, "")
	return out
}

// dig follows keys through nested maps; nil where one is missing.
func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// schemaCovers lists where schema ours does not cover schema up: a key of
// up that ours lacks or gives another value. Extra keys in ours (fields of
// a newer Kubernetes release) are allowed; lists such as "required" and
// "enum" must be equal, since they decide what the server accepts.
func schemaCovers(ours, up any, path string) []string {
	switch u := up.(type) {
	case map[string]any:
		o, ok := ours.(map[string]any)
		if !ok {
			return []string{path + ": not an object in ours"}
		}
		var out []string
		for k, uv := range u {
			ov, has := o[k]
			if !has {
				out = append(out, path+"."+k+": missing in ours")
				continue
			}
			out = append(out, schemaCovers(ov, uv, path+"."+k)...)
		}
		return out
	}
	if !reflect.DeepEqual(ours, up) {
		return []string{fmt.Sprintf("%s: ours %v, upstream %v", path, ours, up)}
	}
	return nil
}

// roundTripCases are upstream-shaped objects using every modelled field.
var roundTripCases = []struct {
	file string
	obj  func() any
}{
	{"queue-upstream.yaml", func() any { return &schedv1beta1.Queue{} }},
	{"podgroup-upstream.yaml", func() any { return &schedv1beta1.PodGroup{} }},
	{"command-upstream.yaml", func() any { return &busv1alpha1.Command{} }},
	{"job-upstream.yaml", func() any { return &batchv1alpha1.Job{} }},
	{"jobtemplate-upstream.yaml", func() any { return &flowv1alpha1.JobTemplate{} }},
	{"jobflow-upstream.yaml", func() any { return &flowv1alpha1.JobFlow{} }},
	{"hypernode-upstream.yaml", func() any { return &topologyv1alpha1.HyperNode{} }},
}

// TestUpstreamYAMLRoundTrip decodes upstream-shaped YAML strictly (an
// unknown field fails) into our types and encodes it again: nothing lost,
// nothing added.
func TestUpstreamYAMLRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			obj := tc.obj()
			if err := yaml.UnmarshalStrict(raw, obj); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			back, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := yaml.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(back, &got); err != nil {
				t.Fatal(err)
			}
			delete(got["metadata"].(map[string]any), "creationTimestamp")
			if !reflect.DeepEqual(want, got) {
				t.Errorf("round trip changed the object.\nwant: %v\ngot:  %v", want, got)
			}
		})
	}
}

// TestObjectsAcceptedByBothCRDSets writes the upstream-shaped objects to a
// server with Volcano's own CRDs and to one with ours, through the dynamic
// client (as any other tool would), and reads them back through our typed
// client: every modelled field survives in both directions.
func TestObjectsAcceptedByBothCRDSets(t *testing.T) {
	upstream, err := crds.LoadDir(cptest.UpstreamCRDs(t, "volcano-crds"))
	if err != nil {
		t.Fatal(err)
	}
	flow, err := crds.LoadDir(cptest.UpstreamCRDs(t, "volcano-flow-crds"))
	if err != nil {
		t.Fatal(err)
	}
	upstream = append(upstream, flow...)
	t.Run("ours", func(t *testing.T) {
		flowOurs, err := volcanoflow.CRDs()
		if err != nil {
			t.Fatal(err)
		}
		if err := crds.Apply(ctxT(t), apiextensionsclient.NewForConfigOrDie(cp.AdminConfig()), "test", flowOurs...); err != nil {
			t.Fatal(err)
		}
		checkAccepted(t, cp.AdminConfig())
	})
	t.Run("upstream", func(t *testing.T) {
		ctx := ctxT(t)
		up, err := controlplane.Start(ctx, controlplane.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = up.Stop() })
		if err := crds.Apply(ctx, apiextensionsclient.NewForConfigOrDie(up.AdminConfig()), "test", upstream...); err != nil {
			t.Fatal(err)
		}
		checkAccepted(t, up.AdminConfig())
	})
}

func checkAccepted(t *testing.T, cfg *rest.Config) {
	ctx := ctxT(t)
	dyn := dynamic.NewForConfigOrDie(cfg)
	vc := versioned.NewForConfigOrDie(cfg)
	for _, tc := range roundTripCases {
		raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		gvk := u.GroupVersionKind()
		plural := map[string]string{"Queue": "queues", "PodGroup": "podgroups", "Command": "commands", "Job": "jobs",
			"JobFlow": "jobflows", "JobTemplate": "jobtemplates", "HyperNode": "hypernodes"}[gvk.Kind]
		res := dyn.Resource(schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: plural})
		var ri dynamic.ResourceInterface = res
		if ns := u.GetNamespace(); ns != "" {
			ri = res.Namespace(ns)
		}
		created, err := ri.Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: create: %v", tc.file, err)
		}
		var typed any
		switch gvk.Kind {
		case "Queue":
			// Status goes through the status subresource, as upstream.
			created.Object["status"] = u.Object["status"]
			if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("queue status: %v", err)
			}
			typed, err = vc.SchedulingV1beta1().Queues().Get(ctx, created.GetName(), metav1.GetOptions{})
		case "Job":
			// Status goes through the status subresource, as upstream.
			created.Object["status"] = u.Object["status"]
			if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("job status: %v", err)
			}
			typed, err = vc.BatchV1alpha1().Jobs(created.GetNamespace()).Get(ctx, created.GetName(), metav1.GetOptions{})
		case "JobFlow", "JobTemplate":
			// Status goes through the status subresource, as upstream.
			created.Object["status"] = u.Object["status"]
			if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("%s status: %v", gvk.Kind, err)
			}
			if gvk.Kind == "JobFlow" {
				typed, err = vc.FlowV1alpha1().JobFlows(created.GetNamespace()).Get(ctx, created.GetName(), metav1.GetOptions{})
			} else {
				typed, err = vc.FlowV1alpha1().JobTemplates(created.GetNamespace()).Get(ctx, created.GetName(), metav1.GetOptions{})
			}
		case "HyperNode":
			// Status goes through the status subresource, as upstream.
			created.Object["status"] = u.Object["status"]
			if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("hypernode status: %v", err)
			}
			typed, err = vc.TopologyV1alpha1().HyperNodes().Get(ctx, created.GetName(), metav1.GetOptions{})
		case "PodGroup":
			typed, err = vc.SchedulingV1beta1().PodGroups(created.GetNamespace()).Get(ctx, created.GetName(), metav1.GetOptions{})
		case "Command":
			typed, err = vc.BusV1alpha1().Commands(created.GetNamespace()).Get(ctx, created.GetName(), metav1.GetOptions{})
		}
		if err != nil {
			t.Fatalf("%s: typed get: %v", tc.file, err)
		}
		b, _ := json.Marshal(typed)
		var got map[string]any
		_ = json.Unmarshal(b, &got)
		for _, field := range []string{"spec", "status", "action", "target", "reason", "message"} {
			w, ok := u.Object[field]
			if !ok {
				continue
			}
			if !reflect.DeepEqual(normalize(w), normalize(got[field])) {
				t.Errorf("%s: field %s changed on the server.\nsent: %v\nread: %v", tc.file, field, w, got[field])
			}
		}
		// Clean up so the next run on a shared server starts empty.
		_ = ri.Delete(ctx, created.GetName(), metav1.DeleteOptions{})
	}
}

// normalize makes YAML- and JSON-decoded values comparable (int64 vs float64).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
