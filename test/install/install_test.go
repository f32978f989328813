package install

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
)

func TestInstallTwiceChangesNothing(t *testing.T) {
	ctx := context.Background()
	k := kube(t)
	// Remove one binding and drift one policy, so the first run has work.
	if err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "vc-queue-spec", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Patch(ctx, "vc-queue-delete", types.MergePatchType,
		[]byte(`{"spec":{"failurePolicy":"Ignore"}}`), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}

	// A server dry run reports the same, and changes nothing.
	out, err := runInstall(t, &install.Options{DryRun: "server"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/vc-queue-spec created (server dry run)",
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-delete configured (server dry run)",
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-root unchanged (server dry run)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if p, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if *p.Spec.FailurePolicy != admissionregistrationv1.Ignore {
		t.Fatal("dry run changed the policy")
	}

	first, err := runInstall(t, &install.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"validatingadmissionpolicybinding.admissionregistration.k8s.io/vc-queue-spec created",
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-delete configured",
		"customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh unchanged",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first install output lacks %q:\n%s", want, first)
		}
	}
	if p, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, "vc-queue-delete", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Fatal("install did not restore failurePolicy")
	}

	second, err := runInstall(t, &install.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(second), "\n")
	plan, err := install.NewPlan(install.Selection{CRDs: true, Policies: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(plan.All()) {
		t.Fatalf("second install reported %d objects, want %d:\n%s", len(lines), len(plan.All()), second)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, " unchanged") {
			t.Errorf("second install changed something: %q", l)
		}
	}
}

func TestInstallPrintNeedsNoCluster(t *testing.T) {
	out := printSelection(t, install.Selection{CRDs: true, Policies: true, Serve: true})
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	kinds := map[string]int{}
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		kinds[obj["kind"].(string)]++
	}
	plan, err := install.NewPlan(install.Selection{CRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	// With --serve, the index mode (docs/admission.md): the three indexes
	// (states, jobs, children), vc-workload-open-queue bound twice
	// (PodGroups, Jobs), vc-queue-delete on the children index (no
	// vc-queue-delete-children), and serve's queue webhook instead of
	// vc-queue-children; serve's metrics and webhook Services.
	if kinds["CustomResourceDefinition"] != len(plan.CRDs) || kinds["CustomResourceDefinition"] < 3 || kinds["ValidatingAdmissionPolicy"] != 5 || kinds["ValidatingAdmissionPolicyBinding"] != 6 ||
		kinds["QueueIndex"] != 3 || kinds["MutatingAdmissionPolicy"] != 0 || kinds["ValidatingWebhookConfiguration"] != 1 || kinds["Service"] != 2 || kinds["Secret"] != 0 {
		t.Fatalf("printed kinds %v", kinds)
	}
}

// Printed without --serve and without a cluster to ask: the per-queue mode,
// which reads no index; --admission=index prints the index mode.
func TestInstallPrintModes(t *testing.T) {
	for _, mode := range []string{"", keys.AdmissionModePerQueue, keys.AdmissionModeIndex} {
		out := printPolicies(t, mode)
		indexed := mode == keys.AdmissionModeIndex
		for want, in := range map[string]bool{
			"kind: QueueIndex": indexed, "name: vc-workload-open-queue-jobs": indexed, "admission.kubectl-vc.io/mode: index": indexed,
			"kind: ValidatingWebhookConfiguration": indexed, "name: vc-queue-children": !indexed, "name: vc-queue-delete-children": !indexed,
			"admission.kubectl-vc.io/mode: per-queue": !indexed, "selector: {}": !indexed,
		} {
			if strings.Contains(out, want) != in {
				t.Errorf("--admission=%q: printed %q: %v, want %v", mode, want, !in, in)
			}
		}
	}
}

func printPolicies(t *testing.T, mode string) string {
	t.Helper()
	return printSelection(t, install.Selection{Policies: true, Admission: mode})
}

// printSelection runs install --print of sel with no Factory at all:
// --print must not touch the cluster.
func printSelection(t *testing.T, sel install.Selection) string {
	t.Helper()
	var out bytes.Buffer
	o := &install.Options{Print: true, DryRun: "none", Timeout: 1, Selection: sel}
	o.IOStreams = genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestInstallRejectsBadFlags(t *testing.T) {
	for _, o := range []*install.Options{
		{DryRun: "client"}, {DryRun: "bogus"}, {Print: true, DryRun: "server"},
	} {
		if _, err := runInstall(t, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// The server-side refusal is pure logic over discovery, so a fake
// discovery client stands in for an old API server.
func TestInstallRefusesServerWithoutPolicyAPI(t *testing.T) {
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	err := install.CheckPolicyAPI(disc)
	if err == nil || !strings.Contains(err.Error(), "does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy") {
		t.Fatalf("got %v", err)
	}
	// And the real server passes.
	d, err := factory().ToDiscoveryClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := install.CheckPolicyAPI(d); err != nil {
		t.Fatal(err)
	}
}
