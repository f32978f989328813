package admission

import (
	"context"
	"reflect"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/doctor"
)

// admissionFinding runs 'doctor -o json' and returns its one admission line.
func admissionFinding(t *testing.T) doctor.Finding {
	t.Helper()
	// doctor exits non-zero for other checks here (nobody acts on Commands).
	return doctorFinding(t, "admission")
}

// An edit of an installed policy or binding that server-side apply would
// keep (an element added to a set-like list, a field the manifest leaves
// out) changes what the server enforces: doctor names it, and install
// --policies undoes it. The edits keep every rule in force, so the other
// tests sharing this API server are not disturbed.
func TestPolicyEditsFoundAndUndone(t *testing.T) {
	setup(t)
	ctx := context.Background()
	ar := kube(t).AdmissionregistrationV1()
	if f := admissionFinding(t); f.Status != doctor.OK {
		t.Fatalf("right after install: %+v", f)
	}

	if _, err := ar.ValidatingAdmissionPolicyBindings().Patch(ctx, "vc-queue-delete", types.MergePatchType,
		[]byte(`{"spec":{"validationActions":["Deny","Audit"]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicies().Patch(ctx, "vc-queue-spec", types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/spec/matchConditions","value":[{"name":"edited","expression":"true"}]}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	f := admissionFinding(t)
	if f.Status != doctor.Warn || f.Fix != "kubectl vc install --policies" ||
		!reflect.DeepEqual(f.Objects, []string{"Policy vc-queue-spec", "PolicyBinding vc-queue-delete"}) ||
		!strings.Contains(f.Message, "2 of 12 queue lifecycle policies and bindings differ from this kubectl-vc's") ||
		!strings.Contains(f.Message, "PolicyBinding vc-queue-delete: spec.validationActions") ||
		!strings.Contains(f.Message, "Policy vc-queue-spec: spec.matchConditions") {
		t.Fatalf("after the edits: %+v", f)
	}

	// A server dry run says what it would change, and changes nothing.
	code, stdout, stderr := runCLI("install", "--policies", "--dry-run=server")
	if code != 0 {
		t.Fatalf("install --dry-run=server: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/vc-queue-delete configured (server dry run)",
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-spec configured (server dry run)",
	} {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("dry run output lacks %q:\n%s", want, stdout)
		}
	}
	if f := admissionFinding(t); f.Status != doctor.Warn {
		t.Fatalf("the dry run changed the policies: %+v", f)
	}

	code, stdout, stderr = runCLI("install", "--policies")
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, " configured\n"); n != 2 {
		t.Errorf("install configured %d objects, want the 2 edited:\n%s", n, stdout)
	}
	b, err := ar.ValidatingAdmissionPolicyBindings().Get(ctx, "vc-queue-delete", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding actions after install: %v", b.Spec.ValidationActions)
	}
	p, err := ar.ValidatingAdmissionPolicies().Get(ctx, "vc-queue-spec", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Spec.MatchConditions) != 1 || p.Spec.MatchConditions[0].Name != "may-break-a-rule" {
		t.Errorf("policy matchConditions after install: %+v", p.Spec.MatchConditions)
	}
	if f := admissionFinding(t); f.Status != doctor.OK {
		t.Fatalf("after install: %+v", f)
	}
	// And again: nothing left to change.
	if _, stdout, _ = runCLI("install", "--policies"); strings.Contains(stdout, " configured\n") {
		t.Errorf("second install changed something:\n%s", stdout)
	}
}
