package install

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// A certificate install makes serves the Service it names for a year, and
// problem finds each reason to make another.
func TestWebhookCertProblems(t *testing.T) {
	now := time.Now()
	c, err := newWebhookCert("vc", now)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.problem("vc", now); p != "" {
		t.Fatalf("a new certificate has a problem: %s", p)
	}
	if p := c.problem("other", now); !strings.Contains(p, "does not name "+keys.QueueWebhookServiceName+".other.svc") {
		t.Errorf("in another namespace: %q", p)
	}
	if p := c.problem("vc", now.Add(webhookCertLifetime-webhookCertRenewBefore+time.Hour)); !strings.Contains(p, "expires at") {
		t.Errorf("within 30 days of its end: %q", p)
	}
	if p := c.problem("vc", now.Add(webhookCertLifetime-webhookCertRenewBefore-time.Hour)); p != "" {
		t.Errorf("31 days before its end: %q", p)
	}
	other, err := newWebhookCert("vc", now)
	if err != nil {
		t.Fatal(err)
	}
	if p := (&webhookCert{CA: other.CA, Cert: c.Cert, Key: c.Key}).problem("vc", now); !strings.Contains(p, "does not verify against ca.crt") {
		t.Errorf("another CA: %q", p)
	}
	if p := (&webhookCert{CA: c.CA, Cert: c.Cert, Key: other.Key}).problem("vc", now); !strings.Contains(p, "not a key pair") {
		t.Errorf("another key: %q", p)
	}
	if p := (&webhookCert{CA: []byte("x"), Cert: c.Cert, Key: c.Key}).problem("vc", now); !strings.Contains(p, "ca.crt holds no PEM") {
		t.Errorf("garbage CA: %q", p)
	}
	if p := (&webhookCert{}).problem("vc", now); p == "" {
		t.Error("an empty Secret serves")
	}
}

func TestWebhookURLAndCA(t *testing.T) {
	for _, good := range []string{"https://10.0.0.5:9443/validate-queues", "https://serve.example.com/validate-queues", "https://[::1]:9443/x"} {
		if err := validateWebhookURL(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.5:9443/validate-queues", "10.0.0.5:9443", "https:///x", "https://u@h/x", "https://h/x?a=b", "https://h/x#f", "https://h:99999/x", "://x"} {
		if err := validateWebhookURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	c, err := newWebhookCert("vc", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := validateCABundle(c.CA); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]byte{nil, []byte("not pem"), c.Key, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")} {
		if err := validateCABundle(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The plan's webhook points at serve's Service in its namespace, or at
// the URL, with the CA given.
func TestWebhookClientConfig(t *testing.T) {
	for _, tc := range []struct {
		sel  Selection
		want map[string]any
	}{
		{Selection{Policies: true, Admission: keys.AdmissionModeIndex, ServeNamespace: "vc", WebhookCABundle: []byte("CA")},
			map[string]any{"caBundle": base64.StdEncoding.EncodeToString([]byte("CA")), "service": map[string]any{
				"namespace": "vc", "name": keys.QueueWebhookServiceName, "path": keys.QueueWebhookPath, "port": int64(443)}}},
		{Selection{Policies: true, Admission: keys.AdmissionModeIndex, WebhookURL: "https://h:1/p"},
			map[string]any{"url": "https://h:1/p"}},
	} {
		p, err := newPlan(tc.sel, "x:1")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, u := range p.Objects {
			if u.GetKind() != "ValidatingWebhookConfiguration" {
				continue
			}
			n++
			hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
			if u.GetName() != keys.QueueWebhookConfigName || len(hooks) != 1 {
				t.Fatalf("%s with %d webhooks", u.GetName(), len(hooks))
			}
			h := hooks[0].(map[string]any)
			if h["name"] != keys.QueueWebhookName {
				t.Errorf("webhook %v", h["name"])
			}
			if got := h["clientConfig"]; !equalJSON(got, tc.want) {
				t.Errorf("clientConfig %v, want %v", got, tc.want)
			}
		}
		if n != 1 {
			t.Errorf("%d webhook configurations in index mode", n)
		}
	}
	p, err := newPlan(Selection{Policies: true, Admission: keys.AdmissionModePerQueue}, "x:1")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range p.Objects {
		if u.GetKind() == "ValidatingWebhookConfiguration" {
			t.Error("per-queue mode ships the webhook")
		}
	}
}

func equalJSON(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok != bok {
		return false
	}
	if !aok {
		return a == b
	}
	if len(am) != len(bm) {
		return false
	}
	for k := range am {
		if !equalJSON(am[k], bm[k]) {
			return false
		}
	}
	return true
}
