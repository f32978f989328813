package admission

import (
	"bytes"
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
)

func runUninstall(t *testing.T, in string, yes, force bool) (string, error) {
	var out bytes.Buffer
	o := &install.UninstallOptions{
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &out},
		Factory:   factory(t), Yes: yes, Force: force,
	}
	err := o.Run(context.Background())
	return out.String(), err
}

// Runs last in the package: it removes what the other tests rely on.
func TestUninstall(t *testing.T) {
	setup(t)
	ctx := context.Background()
	k := kube(t)
	policyExists := func() bool {
		_, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete", metav1.GetOptions{})
		return err == nil
	}
	queuesCRDExists := func() bool {
		_, err := dyn(t).Resource(crdGVR).Get(ctx, "queues.scheduling.volcano.sh", metav1.GetOptions{})
		return !apierrors.IsNotFound(err)
	}

	// Queues exist (the other tests made some): refused before anything goes.
	_, err := runUninstall(t, "", true, false)
	if err == nil || !strings.Contains(err.Error(), "still holds objects") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("uninstall with queues left: %v", err)
	}
	if !policyExists() || !queuesCRDExists() {
		t.Fatal("refused uninstall deleted something")
	}

	// Not confirming deletes nothing.
	out, err := runUninstall(t, "n\n", false, true)
	if err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("unconfirmed uninstall: %v", err)
	}
	if !strings.Contains(out, "Delete these") || !policyExists() {
		t.Fatalf("prompt missing or objects deleted:\n%s", out)
	}

	// Confirmed with --force: policies, bindings and CRDs go.
	out, err = runUninstall(t, "y\n", false, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-delete deleted",
		"customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh deleted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if policyExists() {
		t.Fatal("policy still there")
	}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
