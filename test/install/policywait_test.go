package install

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// TestInstallWaitsForPolicies runs on a fresh control plane of its own, so
// that install meets the window in which the API server has the new
// policies but does not enforce them yet. Once install returns, a queue
// and a podgroup are admitted first time (no "not yet synced" refusal), a
// bad queue is refused by its rule, and install's throwaway probe policy is
// gone. When queue creation stays refused, install fails after --timeout,
// naming the refusal.
func TestInstallWaitsForPolicies(t *testing.T) {
	own, f := ownControlPlane(t)
	ctx := context.Background()
	if out, err := cptest.Install(ctx, f, &install.Options{}); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	c := versioned.NewForConfigOrDie(own.AdminConfig())
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())

	q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "first"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}
	if _, err := c.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatalf("queue created right after install: %v", err)
	}
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "default"}, Spec: schedulingv1beta1.PodGroupSpec{Queue: "first", MinMember: 1}}
	if _, err := c.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("podgroup created right after install: %v", err)
	}
	self := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "self"}, Spec: schedulingv1beta1.QueueSpec{Parent: "self"}}
	_, err := c.SchedulingV1beta1().Queues().Create(ctx, self, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy 'vc-queue-spec'") || !strings.Contains(err.Error(), "cannot be its own parent") {
		t.Fatalf("queue that is its own parent, right after install: got %v, want the vc-queue-spec refusal", err)
	}
	assertNoProbe(t, k)

	// A policy of someone else's refuses every queue: install cannot see
	// its policies in force and says why, within --timeout.
	blocker := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "test-blocks-queues"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"scheduling.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"queues"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "queues are blocked by the test"}},
		},
	}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, blocker, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-blocks-queues"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: "test-blocks-queues", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the blocking policy refuses queues", func() (bool, error) {
		q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{GenerateName: "blocked-"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}
		_, err := c.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "blocked by the test"), nil
	})
	out, err := cptest.Install(ctx, f, &install.Options{Timeout: 3 * time.Second})
	if err == nil {
		t.Fatalf("install succeeded while every queue create is refused:\n%s", out)
	}
	msg := err.Error()
	if !strings.Contains(msg, "not in force after 3s") || !strings.Contains(msg, "blocked by the test") || strings.Contains(msg, "\n") {
		t.Fatalf("install error %q: want one line saying the policies are not in force and naming the refusal", msg)
	}
	assertNoProbe(t, k)
}

// assertNoProbe checks that install removed its throwaway probe policy
// and binding.
func assertNoProbe(t *testing.T, k kubernetes.Interface) {
	t.Helper()
	ps, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range ps.Items {
		if strings.HasPrefix(p.Name, "kubectl-vc-install-probe") {
			left = append(left, "policy "+p.Name)
		}
	}
	for _, b := range bs.Items {
		if strings.HasPrefix(b.Name, "kubectl-vc-install-probe") {
			left = append(left, "binding "+b.Name)
		}
	}
	if len(left) > 0 {
		t.Fatalf("install left its probe: %v", left)
	}
}
