package manifests

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFirstDifference(t *testing.T) {
	want := object(t, `
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [scheduling.volcano.sh]
      operations: [DELETE]
  validations:
  - expression: "a"
    reason: Invalid
  replicas: 2
`)
	for _, tc := range []struct{ name, got, diff string }{
		{"same, with server defaults", `
spec:
  failurePolicy: Fail
  matchConstraints:
    matchPolicy: Equivalent
    resourceRules:
    - apiGroups: [scheduling.volcano.sh]
      operations: [DELETE]
      scope: "*"
  validations:
  - expression: "a"
    reason: Invalid
  replicas: 2.0
`, ""},
		{"changed expression", `
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: [{apiGroups: [scheduling.volcano.sh], operations: [DELETE]}]}
  validations: [{expression: "b", reason: Invalid}]
  replicas: 2
`, "spec.validations[0].expression"},
		{"element added", `
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: [{apiGroups: [scheduling.volcano.sh], operations: [DELETE, CREATE]}]}
  validations: [{expression: "a", reason: Invalid}]
  replicas: 2
`, "spec.matchConstraints.resourceRules[0].operations"},
		{"field missing", `
spec:
  matchConstraints: {resourceRules: [{apiGroups: [scheduling.volcano.sh], operations: [DELETE]}]}
  validations: [{expression: "a", reason: Invalid}]
  replicas: 2
`, "spec.failurePolicy"},
		{"number changed", `
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: [{apiGroups: [scheduling.volcano.sh], operations: [DELETE]}]}
  validations: [{expression: "a", reason: Invalid}]
  replicas: 3
`, "spec.replicas"},
		{"list became a map", `
spec:
  failurePolicy: Fail
  matchConstraints: {resourceRules: {a: b}}
  validations: [{expression: "a", reason: Invalid}]
  replicas: 2
`, "spec.matchConstraints.resourceRules"},
	} {
		if got := FirstDifference(want["spec"], object(t, tc.got)["spec"], "spec"); got != tc.diff {
			t.Errorf("%s: difference %q, want %q", tc.name, got, tc.diff)
		}
	}
}

func TestSpecOfExactKinds(t *testing.T) {
	binding := &unstructured.Unstructured{Object: object(t, `
kind: ValidatingAdmissionPolicyBinding
spec: {policyName: p, validationActions: [Deny]}
`)}
	policy := &unstructured.Unstructured{Object: object(t, `
kind: ValidatingAdmissionPolicy
spec: {failurePolicy: Fail, validations: [{expression: "true"}]}
`)}
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		got  string
		diff string
	}{
		{"binding as installed", binding, `{policyName: p, validationActions: [Deny]}`, ""},
		{"binding with an action added", binding, `{policyName: p, validationActions: [Deny, Audit]}`, "spec.validationActions"},
		{"binding narrowed by matchResources", binding, `{policyName: p, validationActions: [Deny], matchResources: {namespaceSelector: {matchLabels: {a: b}}}}`, "spec.matchResources"},
		{"policy with an empty list the manifest leaves out", policy, `{failurePolicy: Fail, validations: [{expression: "true"}], matchConditions: []}`, ""},
		{"policy with a matchCondition added", policy, `{failurePolicy: Fail, validations: [{expression: "true"}], matchConditions: [{name: x, expression: "false"}]}`, "spec.matchConditions"},
		{"policy with a server default the manifest leaves out", policy, `{failurePolicy: Fail, validations: [{expression: "true"}], matchConstraints: {matchPolicy: Equivalent}}`, ""},
	} {
		if got := FirstDifference(Spec(tc.u), object(t, "spec: "+tc.got)["spec"], "spec"); got != tc.diff {
			t.Errorf("%s: difference %q, want %q", tc.name, got, tc.diff)
		}
	}
	// Other kinds: what the manifest leaves out is not looked at.
	deployment := &unstructured.Unstructured{Object: object(t, `{kind: Deployment, spec: {replicas: 2}}`)}
	if got := FirstDifference(Spec(deployment), object(t, `{spec: {replicas: 2, paused: true}}`)["spec"], "spec"); got != "" {
		t.Errorf("deployment: difference %q", got)
	}
}
