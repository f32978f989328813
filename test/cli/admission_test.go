package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestAdmissionRejection: when an admission policy refuses a delete, the
// user sees the policy's message as the one error line, and the queue
// stays. The policy here guards only one queue name, so it cannot disturb
// the other tests sharing the control plane.
func TestAdmissionRejection(t *testing.T) {
	ctx := context.Background()
	kc := kube(t)
	deleteQueuesAfter(t, "e2e-guarded")
	mustVC(t, "queue", "create", "e2e-guarded")
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-guard-queue"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"scheduling.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"queues"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "oldObject.metadata.name != 'e2e-guarded'",
				Message:    "a queue can only be deleted when it is Closed: run 'kubectl vc queue delete --close'",
			}},
		},
	}
	if _, err := kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-guard-queue"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "e2e-guard-queue",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	if _, err := kc.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, "e2e-guard-queue", metav1.DeleteOptions{})
		_ = kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, "e2e-guard-queue", metav1.DeleteOptions{})
		// The API server drops the policy as asynchronously as it loaded
		// it: deleteQueuesAfter's delete, which runs next, would be refused
		// until it has. Wait until a server-side dry-run delete is admitted.
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			err := env.vc.SchedulingV1beta1().Queues().Delete(ctx, "e2e-guarded", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil || !strings.Contains(err.Error(), "denied request"), nil
		})
		if err != nil {
			t.Errorf("cleanup: the deleted policy still refuses deleting e2e-guarded: %v", err)
		}
	})
	// The API server loads policies asynchronously: probe with server-side
	// dry-run deletes (they pass admission but change nothing) until the
	// policy answers; between probes, wait for a policy watch event (a fresh
	// watch first replays the existing policies) rather than sleeping.
	for {
		err := env.vc.SchedulingV1beta1().Queues().Delete(ctx, "e2e-guarded", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "denied request") {
			break
		}
		if err != nil {
			t.Fatalf("dry-run delete: %v", err)
		}
		w, werr := kc.AdmissionregistrationV1().ValidatingAdmissionPolicies().Watch(ctx, metav1.ListOptions{})
		if werr != nil {
			t.Fatal(werr)
		}
		select {
		case <-w.ResultChan():
		case <-ctx.Done():
		}
		w.Stop()
	}

	r := vc(t, "queue", "delete", "e2e-guarded")
	if r.Code == 0 {
		t.Fatalf("delete succeeded:\n%s", r)
	}
	want := "error: delete queue \"e2e-guarded\": rejected by admission policy: a queue can only be deleted when it is Closed: run 'kubectl vc queue delete --close'"
	if strings.TrimSpace(r.Stderr) != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", r.Stderr, want)
	}
	getQueue(t, "e2e-guarded")
}
