package doctor

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// TestDoctorQueueWebhook: in index mode, admission-index fails while the
// queue webhook is missing or has nowhere to go (its Service missing,
// without a ready endpoint, or without a CA), says where a URL points, and
// warns of what it replaced that an earlier install left; in per-queue
// mode it warns of a webhook left behind. The objects are written here as
// install would write them (the binding that records the mode, the
// webhook), with failurePolicy Ignore so that the package's other tests
// never depend on a webhook nobody answers.
func TestDoctorQueueWebhook(t *testing.T) {
	ctx := context.Background()
	k := env.kube
	adm := k.AdmissionregistrationV1()
	const ns = "doctor-webhook"
	controllersNamespace(t, ns)
	indexLabels := map[string]string{"app.kubernetes.io/part-of": "kubectl-vc", keys.AdmissionMode: keys.AdmissionModeIndex}
	binding := func(name string) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: indexLabels},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	}
	// vc-queue-children (replaced by the webhook) and
	// vc-queue-delete-children (its rule now in vc-queue-delete) as an
	// earlier release's index mode left them.
	for _, name := range []string{"vc-workload-open-queue", "vc-queue-children", "vc-queue-delete-children"} {
		if _, err := adm.ValidatingAdmissionPolicyBindings().Create(ctx, binding(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.vc.AdmissionV1alpha1().QueueIndexes().Create(ctx, &admissionv1alpha1.QueueIndex{ObjectMeta: metav1.ObjectMeta{Name: "hierarchy", Labels: indexLabels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{"vc-workload-open-queue", "vc-queue-children", "vc-queue-delete-children"} {
			_ = adm.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
		}
		_ = adm.ValidatingWebhookConfigurations().Delete(ctx, keys.QueueWebhookConfigName, metav1.DeleteOptions{})
		_ = env.vc.AdmissionV1alpha1().QueueIndexes().Delete(ctx, "hierarchy", metav1.DeleteOptions{})
	})
	webhookFindings := func() (hook, left []finding) {
		t.Helper()
		rep, _ := doctor(t, env.admin, "--controllers-namespace", ns, "--stuck-after", "24h")
		for _, f := range rep.findings("admission-index") {
			switch {
			case strings.Contains(f.Message, "queue webhook") && !strings.Contains(f.Message, "an earlier install left"):
				hook = append(hook, finding(f))
			case strings.Contains(f.Message, "an earlier install left"):
				left = append(left, finding(f))
			}
		}
		return hook, left
	}
	expect := func(status, msg string) {
		t.Helper()
		hook, _ := webhookFindings()
		if len(hook) != 1 || hook[0].Status != status || !strings.Contains(hook[0].Message, msg) {
			t.Fatalf("want one %s finding saying %q, got %+v", status, msg, hook)
		}
	}

	// Missing; and the leftovers.
	expect("FAIL", "its queue webhook (validatingwebhookconfiguration vc-queue-hierarchy) is missing")
	_, left := webhookFindings()
	if len(left) != 1 || left[0].Status != "WARN" || left[0].Fix != "kubectl vc install --policies" ||
		strings.Join(left[0].Objects, ",") != "PolicyBinding vc-queue-children,PolicyBinding vc-queue-delete-children,QueueIndex hierarchy" {
		t.Errorf("leftovers: %+v", left)
	}

	// Pointing at serve's Service: missing, no ready endpoint, no CA, ready.
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: keys.QueueWebhookConfigName, Labels: indexLabels},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: keys.QueueWebhookName,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Namespace: ns, Name: keys.QueueWebhookServiceName, Path: ptr.To(keys.QueueWebhookPath), Port: ptr.To[int32](443)}},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"scheduling.volcano.sh"}, APIVersions: []string{"*"}, Resources: []string{"queues"}}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	created, err := adm.ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expect("FAIL", "calls service "+ns+"/"+keys.QueueWebhookServiceName+", which does not exist")
	if _, err := k.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: keys.QueueWebhookServiceName},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "webhook", Port: 443}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("FAIL", "which has no ready endpoint")
	name, ready := "webhook", true
	if _, err := k.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: keys.QueueWebhookServiceName + "-a", Labels: map[string]string{discoveryv1.LabelServiceName: keys.QueueWebhookServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: ptr.To[int32](9443)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("FAIL", "without a caBundle")
	created.Webhooks[0].ClientConfig.CABundle = testCA(t)
	if created, err = adm.ValidatingWebhookConfigurations().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("OK", "1 ready endpoint(s) (10.1.2.3)")

	// A serve outside the cluster: doctor says where.
	created.Webhooks[0].ClientConfig.Service = nil
	created.Webhooks[0].ClientConfig.URL = ptr.To("https://10.0.0.5:9443/validate-queues")
	if _, err = adm.ValidatingWebhookConfigurations().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("OK", "calls a serve outside the cluster at https://10.0.0.5:9443/validate-queues")

	// Per-queue mode with the webhook left.
	b, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, "vc-workload-open-queue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Labels[keys.AdmissionMode] = keys.AdmissionModePerQueue
	if _, err := adm.ValidatingAdmissionPolicyBindings().Update(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	hook, _ := webhookFindings()
	if len(hook) != 1 || hook[0].Status != "WARN" || !strings.Contains(hook[0].Message, "per-queue mode but the index mode's queue webhook") ||
		hook[0].Fix != "kubectl vc install --policies --admission=per-queue" {
		t.Errorf("per-queue mode with the webhook left: %+v", hook)
	}
}

// testCA is a PEM CA certificate for a caBundle.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "doctor test CA"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
