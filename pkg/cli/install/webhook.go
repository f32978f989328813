package install

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/url"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// The queue webhook of the index mode (policies/40-queue-hierarchy-webhook.yaml):
// where the API server finds serve. Where serve runs in the cluster, through
// its Service with the CA of the Secret install makes (webhookcert.go);
// where it runs elsewhere, at --webhook-url with --webhook-ca-file.

var vwcGVR = vapGV.WithResource("validatingwebhookconfigurations")

// setWebhookClient fills in the clientConfig of the webhook configuration
// u from the selection.
func setWebhookClient(u *unstructured.Unstructured, sel Selection) error {
	cc := map[string]any{}
	if sel.WebhookURL != "" {
		cc["url"] = sel.WebhookURL
	} else {
		cc["service"] = map[string]any{
			"namespace": sel.serveNamespace(),
			"name":      keys.QueueWebhookServiceName,
			"path":      keys.QueueWebhookPath,
			"port":      int64(443),
		}
	}
	if len(sel.WebhookCABundle) > 0 {
		// A []byte field: base64 in JSON.
		cc["caBundle"] = base64.StdEncoding.EncodeToString(sel.WebhookCABundle)
	}
	hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
	for _, h := range hooks {
		if m, ok := h.(map[string]any); ok {
			m["clientConfig"] = cc
		}
	}
	return unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
}

// webhookWhere says where the webhook of sel points, for messages.
func webhookWhere(sel Selection) string {
	if sel.WebhookURL != "" {
		return sel.WebhookURL
	}
	return fmt.Sprintf("service %s/%s port 443 path %s", sel.serveNamespace(), keys.QueueWebhookServiceName, keys.QueueWebhookPath)
}

// validateWebhookURL checks --webhook-url as the API server will: an
// https URL with a host, no user, query or fragment.
func validateWebhookURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL (%v)", err)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("the API server calls webhooks over https only, e.g. https://10.0.0.5:%d%s", keys.QueueWebhookPort, keys.QueueWebhookPath)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("no host, e.g. https://10.0.0.5:%d%s", keys.QueueWebhookPort, keys.QueueWebhookPath)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return fmt.Errorf("a webhook URL has no user, query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not a port", p)
		}
	}
	return nil
}

// validateCABundle checks that b holds PEM certificates and nothing else
// the API server would choke on.
func validateCABundle(b []byte) error {
	n := 0
	for rest := b; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("holds a PEM %s, not only certificates", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("holds a certificate that does not parse (%v)", err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("holds no PEM certificate")
	}
	return nil
}

// serveInCluster tells whether serve's Deployment exists in ns.
func serveInCluster(ctx context.Context, dyn dynamic.Interface, ns string) (bool, error) {
	_, err := dyn.Resource(deploymentGVR).Namespace(ns).Get(ctx, manifests.ServeDeployment, metav1.GetOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, namedErr("read", "deployment "+ns+"/"+manifests.ServeDeployment, err)
}

// installedWebhookURL is the URL and CA bundle of the installed queue
// webhook, when it calls a serve outside the cluster (found false: no
// webhook, or one that calls a Service).
func installedWebhookURL(ctx context.Context, dyn dynamic.Interface) (where string, ca []byte, found bool, err error) {
	u, err := dyn.Resource(vwcGVR).Get(ctx, keys.QueueWebhookConfigName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, false, err
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &vwc); err != nil {
		return "", nil, false, err
	}
	for _, w := range vwc.Webhooks {
		if w.Name == keys.QueueWebhookName && w.ClientConfig.URL != nil && *w.ClientConfig.URL != "" {
			return *w.ClientConfig.URL, w.ClientConfig.CABundle, true, nil
		}
	}
	return "", nil, false, nil
}
