package manifests

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FirstDifference returns the path (e.g. "spec.validations[0].expression")
// of the first place where got, an object as the API server returns it,
// does not hold what want, a manifest, sets; "" when it holds all of it.
// Fields the manifest leaves out may hold anything, since the API server
// fills in defaults (a policy's matchPolicy, a rule's scope); lists must
// have the same length, since an element someone else added to a
// server-side applied set stays there.
func FirstDifference(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if d := FirstDifference(w[k], g[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if d := FirstDifference(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case nil:
		// Set to nil by Spec: absent, or empty, on the server too.
		if g, isList := got.([]any); got == nil || isList && len(g) == 0 {
			return ""
		}
		if g, isMap := got.(map[string]any); isMap && len(g) == 0 {
			return ""
		}
		return path
	default:
		if wf, ok := number(want); ok {
			if gf, ok := number(got); ok && wf == gf {
				return ""
			}
			return path
		}
		if !reflect.DeepEqual(want, got) {
			return path
		}
		return ""
	}
}

// number reads the numbers JSON and YAML decoding give.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// unsetFields are the spec fields of the kinds whose spec must be exactly
// the manifest's that a manifest may leave out and the API server does not
// default: left out, they must be absent on the server too. A validation
// action, matchCondition or variable someone added changes what a policy
// enforces.
var unsetFields = map[string][]string{
	"ValidatingAdmissionPolicy":        {"paramKind", "matchConditions", "variables", "validations", "auditAnnotations"},
	"ValidatingAdmissionPolicyBinding": {"paramRef", "matchResources", "validationActions"},
}

// Exact reports whether install makes the spec of objects of this kind
// exactly the manifest's (see unsetFields): the admission policies and
// their bindings.
func Exact(kind string) bool { return unsetFields[kind] != nil }

// Spec returns the spec a manifest object asks for, to compare with
// FirstDifference: for Exact kinds, the fields it leaves out that the
// server does not default are there as nil, so that the server's copy
// must not have them either.
func Spec(u *unstructured.Unstructured) any {
	spec, ok := u.Object["spec"].(map[string]any)
	if !ok || !Exact(u.GetKind()) {
		return u.Object["spec"]
	}
	out := make(map[string]any, len(spec)+len(unsetFields[u.GetKind()]))
	for k, v := range spec {
		out[k] = v
	}
	for _, f := range unsetFields[u.GetKind()] {
		if _, set := out[f]; !set {
			out[f] = nil
		}
	}
	return out
}
