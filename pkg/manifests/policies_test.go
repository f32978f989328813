package manifests

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// Each mode is a whole set: no two objects of one kind share a name (an
// apply would keep only the last), and every policy has its binding.
func TestPolicyModesAreWholeSets(t *testing.T) {
	for _, mode := range []string{keys.AdmissionModeIndex, keys.AdmissionModePerQueue} {
		objs, err := PolicyObjects(mode)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		policies, bindings := map[string]bool{}, map[string]bool{}
		for _, u := range objs {
			k := u.GetKind() + "/" + u.GetName()
			if seen[k] {
				t.Errorf("mode %s: %s twice", mode, k)
			}
			seen[k] = true
			switch u.GetKind() {
			case "ValidatingAdmissionPolicy":
				policies[u.GetName()] = true
			case "ValidatingAdmissionPolicyBinding":
				bindings[u.GetName()] = true
			}
			if m, ok := u.GetLabels()[keys.AdmissionMode]; ok && m != mode {
				t.Errorf("mode %s holds %s of mode %s", mode, k, m)
			}
		}
		for p := range policies {
			if !bindings[p] {
				t.Errorf("mode %s: policy %s has no binding", mode, p)
			}
		}
		// The per-queue mode never reads an index, and the index mode
		// never goes through every Queue.
		for _, u := range objs {
			if u.GetKind() != "ValidatingAdmissionPolicyBinding" {
				continue
			}
			_, sel, _ := unstructured.NestedMap(u.Object, "spec", "paramRef", "selector")
			if mode == keys.AdmissionModeIndex && sel {
				t.Errorf("index mode: binding %s selects its params", u.GetName())
			}
		}
	}
	if _, err := PolicyObjects("webhook"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

// The index mode's policies hold the index's maximum age as a CEL
// duration: it must be the one serve and doctor use.
func TestIndexMaxAgeMatchesPolicies(t *testing.T) {
	raw, err := Raw(Policies)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("duration('%ds')", int(admissionv1alpha1.QueueIndexMaxAge.Seconds()))
	n := strings.Count(string(raw), "duration('")
	if n == 0 || strings.Count(string(raw), want) != n {
		t.Errorf("the policies hold %d durations, want each to be %s", n, want)
	}
	msg := fmt.Sprintf("over %ds before this request", int(admissionv1alpha1.QueueIndexMaxAge.Seconds()))
	if strings.Count(string(raw), msg) != n {
		t.Errorf("each freshness message should say %q", msg)
	}
}
