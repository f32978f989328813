package install

import (
	"bytes"
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

func runUninstall(f util.Factory, in string, yes, force bool, dryRun ...string) (string, error) {
	var out bytes.Buffer
	o := &install.UninstallOptions{
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &out},
		Factory:   f, Yes: yes, Force: force, DryRun: "none",
	}
	if len(dryRun) > 0 {
		o.DryRun = dryRun[0]
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	if err := o.Complete(); err != nil {
		return "", err
	}
	err := o.Run(context.Background())
	return out.String(), err
}

// TestUninstall runs on a control plane of its own: what it removes (the
// CRDs and the policies) must not be pulled from under the package's other
// tests, whatever order they run in.
func TestUninstall(t *testing.T) {
	own, f := ownControlPlane(t)
	if out, err := cptest.Install(context.Background(), f, &install.Options{}); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	ctx := context.Background()
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	d := dynamic.NewForConfigOrDie(own.AdminConfig())
	policyExists := func() bool {
		_, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete", metav1.GetOptions{})
		return err == nil
	}
	queuesCRDExists := func() bool {
		_, err := d.Resource(crdGVR).Get(ctx, "queues.scheduling.volcano.sh", metav1.GetOptions{})
		return !apierrors.IsNotFound(err)
	}
	left := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "left-behind"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}
	// Install waits until its policies are in force: the first queue
	// created right after it is admitted, first time.
	if _, err := versioned.NewForConfigOrDie(own.AdminConfig()).SchedulingV1beta1().Queues().Create(ctx, left, metav1.CreateOptions{}); err != nil {
		t.Fatalf("first queue right after install: %v", err)
	}

	// A queue exists: refused before anything goes.
	_, err := runUninstall(f, "", true, false)
	if err == nil || !strings.Contains(err.Error(), "still holds objects") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("uninstall with queues left: %v", err)
	}
	if !policyExists() || !queuesCRDExists() {
		t.Fatal("refused uninstall deleted something")
	}

	// Not confirming deletes nothing.
	out, err := runUninstall(f, "n\n", false, true)
	if err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("unconfirmed uninstall: %v", err)
	}
	if !strings.Contains(out, "Delete these") || !policyExists() {
		t.Fatalf("prompt missing or objects deleted:\n%s", out)
	}

	// Confirmed with --force: policies, bindings and CRDs go.
	out, err = runUninstall(f, "y\n", false, true)
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
