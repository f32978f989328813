package install

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-vc/kubectl-vc/internal/testenv/controlplane"
	"github.com/kubectl-vc/kubectl-vc/internal/testenv/cptest"
	admissionv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/admission/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	schedulingv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/install"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// The index mode's queue webhook as install sets it up: the configuration
// and where it points, the certificate, the wait until the API server
// really calls it, and the mode switches. What answers the webhook here is
// a stand-in (standIn below) that admits every queue but those named
// deny-*: these tests are about install's side, the API server calling
// what install configured; serve's own answers are test/admission's.

// standIn answers AdmissionReviews as the webhook's server and records
// each call as "OPERATION name".
type standIn struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []string
}

func startStandIn(t *testing.T, addr string, cert *tls.Certificate, get func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *standIn {
	t.Helper()
	s := &standIn{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if r.URL.Path != keys.QueueWebhookPath || json.NewDecoder(r.Body).Decode(&review) != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview at "+keys.QueueWebhookPath, http.StatusBadRequest)
			return
		}
		req := review.Request
		s.mu.Lock()
		s.calls = append(s.calls, string(req.Operation)+" "+req.Name)
		s.mu.Unlock()
		resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: !strings.HasPrefix(req.Name, "deny-")}
		if !resp.Allowed {
			resp.Result = &metav1.Status{Message: "the stand-in refuses " + req.Name, Code: http.StatusUnprocessableEntity}
		}
		review.Request, review.Response = nil, resp
		_ = json.NewEncoder(w).Encode(review)
	}))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.srv.Listener = l
	s.srv.TLS = &tls.Config{GetCertificate: get}
	if cert != nil {
		s.srv.TLS.Certificates = []tls.Certificate{*cert}
	}
	// Handshakes the test makes fail on purpose are not news.
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

// called returns the calls recorded so far.
func (s *standIn) called() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// selfSigned makes a CA and a serving certificate for 127.0.0.1, as an
// administrator would for a serve outside the cluster.
func selfSigned(t *testing.T) (caPEM []byte, cert tls.Certificate) {
	t.Helper()
	caPEM, certPEM, keyPEM, err := install.NewWebhookCertificate(time.Now(), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return caPEM, cert
}

// checkWebhookConfig: the configuration is the one the index mode ships.
func checkWebhookConfig(t *testing.T, k kubernetes.Interface) admissionregistrationv1.ValidatingWebhook {
	t.Helper()
	vwc, err := k.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), keys.QueueWebhookConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vwc.Labels[keys.AdmissionMode] != keys.AdmissionModeIndex || vwc.Labels["app.kubernetes.io/part-of"] != "kubectl-vc" || len(vwc.Webhooks) != 1 {
		t.Fatalf("webhook configuration labels %v, %d webhooks", vwc.Labels, len(vwc.Webhooks))
	}
	h := vwc.Webhooks[0]
	if h.Name != keys.QueueWebhookName || *h.FailurePolicy != admissionregistrationv1.Fail || *h.SideEffects != admissionregistrationv1.SideEffectClassNone ||
		*h.TimeoutSeconds != 5 || *h.MatchPolicy != admissionregistrationv1.Equivalent || len(h.AdmissionReviewVersions) != 1 || h.AdmissionReviewVersions[0] != "v1" ||
		len(h.MatchConditions) != 1 || len(h.Rules) != 1 {
		t.Fatalf("webhook %+v", h)
	}
	r := h.Rules[0]
	if strings.Join(r.APIGroups, ",") != "scheduling.volcano.sh" || strings.Join(r.Resources, ",") != "queues" || *r.Scope != admissionregistrationv1.ClusterScope ||
		fmt.Sprint(r.Operations) != "[CREATE UPDATE]" {
		t.Fatalf("rule %+v", r)
	}
	return h
}

// TestQueueWebhookAtURL: serve outside the cluster (--webhook-url,
// --webhook-ca-file). Without it, or serve in the cluster, the index mode
// is refused with nothing written; with it install waits until the API
// server calls it, the API server calls it for what can break a rule only,
// install fails naming it once it stops answering, and a switch to the
// per-queue mode removes it.
func TestQueueWebhookAtURL(t *testing.T) {
	own, f := ownControlPlane(t)
	ctx := context.Background()
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	vc := versioned.NewForConfigOrDie(own.AdminConfig())

	_, err := cptest.Install(ctx, f, &install.Options{Selection: install.Selection{CRDs: true, Policies: true, Admission: keys.AdmissionModeIndex}})
	if err == nil || !strings.Contains(err.Error(), "needs serve to answer its queue webhook") || !strings.Contains(err.Error(), "--webhook-url") {
		t.Fatalf("index mode without a serve: %v", err)
	}
	if l, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("the refused install wrote policies: %v %v", l, err)
	}

	caPEM, cert := selfSigned(t)
	hook := startStandIn(t, "127.0.0.1:0", &cert, nil)
	url := hook.srv.URL + keys.QueueWebhookPath
	out, err := cptest.Install(ctx, f, &install.Options{Selection: install.Selection{CRDs: true, Policies: true, WebhookURL: url, WebhookCABundle: caPEM}})
	if err != nil {
		t.Fatalf("install --webhook-url: %v\n%s", err, out)
	}
	h := checkWebhookConfig(t, k)
	if h.ClientConfig.URL == nil || *h.ClientConfig.URL != url || h.ClientConfig.Service != nil || string(h.ClientConfig.CABundle) != string(caPEM) {
		t.Fatalf("clientConfig %+v, want url %s and the CA given", h.ClientConfig, url)
	}
	// install returned once the API server called the webhook: its
	// dry-run probe queue.
	if c := hook.called(); len(c) == 0 || !strings.HasPrefix(c[0], "CREATE ") {
		t.Fatalf("install returned before the API server called the webhook: %v", c)
	}
	// What the webhook replaced is not installed, nor the per-queue mode's
	// children rule for deletes: vc-queue-delete reads the children index.
	for _, name := range []string{"vc-queue-children", "vc-queue-delete-children"} {
		if _, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("index mode installed the policy %s: %v", name, err)
		}
	}
	if b, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, "vc-queue-delete", metav1.GetOptions{}); err != nil ||
		b.Spec.ParamRef == nil || b.Spec.ParamRef.Name != admissionv1alpha1.QueueIndexChildren {
		t.Errorf("index mode's vc-queue-delete does not read the children index: %+v, %v", b, err)
	}
	if _, err := vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, "hierarchy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("index mode installed the queue index hierarchy: %v", err)
	}

	// The API server calls the webhook on creates that name a parent or set
	// a resource list, and on updates of a resource list; not on a plain
	// queue under root, a label or a weight, nor on deletes.
	queues := vc.SchedulingV1beta1().Queues()
	capped := schedulingv1beta1.QueueSpec{Weight: 1, Capability: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	if _, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "deny-me"}, Spec: capped}, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "the stand-in refuses deny-me") {
		t.Fatalf("a create the webhook refuses: %v", err)
	}
	if _, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "deny-me"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "q0"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil || !strings.Contains(err.Error(), "the stand-in refuses deny-me") {
		t.Fatalf("a create under a parent, which the webhook refuses: %v", err)
	}
	n := len(hook.called())
	q, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q1"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Labels = map[string]string{"team": "a"}
	q.Spec.Weight = 3
	if q, err = queues.Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := hook.called(); len(c) != n {
		t.Errorf("a label and weight update called the webhook: %v", c[n:])
	}
	q.Spec.Capability = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	if q, err = queues.Update(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	q.Status.State = schedulingv1beta1.QueueStateClosed
	if _, err = queues.UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := queues.Delete(ctx, "q1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := hook.called(); strings.Join(c[n:], ",") != "UPDATE q1" {
		t.Errorf("calls from the plain create on: %q, want the capability update only", c[n:])
	}

	// serve gone: install says which webhook does not answer, and where.
	hook.srv.Close()
	_, err = cptest.Install(ctx, f, &install.Options{Timeout: 3 * time.Second, Selection: install.Selection{Policies: true, WebhookURL: url, WebhookCABundle: caPEM}})
	if err == nil || !strings.Contains(err.Error(), keys.QueueWebhookName) || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "kubectl vc doctor") {
		t.Fatalf("install with the webhook down: %v", err)
	}

	// The per-queue mode has no webhook.
	out, err = cptest.Install(ctx, f, &install.Options{Selection: install.Selection{Policies: true, Admission: keys.AdmissionModePerQueue}})
	if err != nil {
		t.Fatalf("switch to per-queue: %v\n%s", err, out)
	}
	if !strings.Contains(out, "validatingwebhookconfiguration.admissionregistration.k8s.io/"+keys.QueueWebhookConfigName+" deleted (not used in per-queue mode)") {
		t.Errorf("the switch does not say the webhook went:\n%s", out)
	}
	if _, err := k.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, keys.QueueWebhookConfigName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the webhook configuration is left in per-queue mode: %v", err)
	}
	if _, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "deny-no-more"}, Spec: capped}, metav1.CreateOptions{}); err != nil {
		t.Errorf("a queue create in per-queue mode, the webhook's server gone: %v", err)
	}
	if l, err := vc.AdmissionV1alpha1().QueueIndexes().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("queue indexes left in per-queue mode: %v %v", l, err)
	}
}

// hostIP is an address of this machine the API server can dial and an
// EndpointSlice may hold (not loopback).
func hostIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no address but loopback for a Service endpoint")
	return ""
}

// TestQueueWebhookInCluster: serve in the cluster (install --serve). The
// webhook calls serve's Service with the CA of the Secret install makes;
// the API server reaches it through the Service's endpoints
// (--enable-aggregator-routing, no kube-proxy here), which this test
// writes for the stand-in, serving the Secret's certificate as serve's
// pods do. The Secret is made once and kept; one that does not serve is
// made again. The switch from an earlier per-queue install removes the
// policies of the other mode and the indexes of earlier releases, and
// uninstall removes the webhook, its Service and its Secret.
func TestQueueWebhookInCluster(t *testing.T) {
	own, f := ownControlPlane(t)
	ctx := context.Background()
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	vc := versioned.NewForConfigOrDie(own.AdminConfig())
	ip := hostIP(t)
	const ns = "kvc"

	// An earlier per-queue install, and the indexes an earlier release's
	// index mode kept.
	if out, err := cptest.Install(ctx, f, &install.Options{}); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	for _, name := range []string{"children", "hierarchy"} {
		if _, err := vc.AdmissionV1alpha1().QueueIndexes().Create(ctx, &admissionv1alpha1.QueueIndex{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"app.kubernetes.io/part-of": "kubectl-vc", keys.AdmissionMode: keys.AdmissionModeIndex}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// serve's pods, as the stand-in: it serves the certificate of the
	// Secret install makes (read at each handshake, as serve reloads it),
	// and the Service's endpoints lead to it (written here: no
	// controllers, no kubelet), before install runs, so that install
	// --serve --admission=index (the mode installed is kept without it)
	// finds the webhook's Service with a ready endpoint and waits until
	// the API server calls it.
	if _, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hook := startStandIn(t, ip+":0", nil, func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		s, err := k.CoreV1().Secrets(ns).Get(ctx, keys.QueueWebhookSecretName, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		c, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
		return &c, err
	})
	port := int32(hook.srv.Listener.Addr().(*net.TCPAddr).Port)
	name, ready, tcp := "webhook", true, corev1.ProtocolTCP
	if _, err := k.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: keys.QueueWebhookServiceName + "-test", Labels: map[string]string{discoveryv1.LabelServiceName: keys.QueueWebhookServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &tcp}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := cptest.Install(ctx, f, &install.Options{Selection: install.Selection{CRDs: true, Policies: true, Admission: keys.AdmissionModeIndex, Serve: true, ServeNamespace: ns}, Image: "registry.example.com/kubectl-vc:test"})
	r := struct {
		out string
		err error
	}{out, err}
	secret, err := k.CoreV1().Secrets(ns).Get(ctx, keys.QueueWebhookSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeTLS || len(secret.Data["ca.crt"]) == 0 {
		t.Fatalf("secret type %s, keys %d", secret.Type, len(secret.Data))
	}
	if r.err != nil {
		t.Fatalf("install --serve: %v\n%s", r.err, r.out)
	}
	h := checkWebhookConfig(t, k)
	svc := h.ClientConfig.Service
	if h.ClientConfig.URL != nil || svc == nil || svc.Namespace != ns || svc.Name != keys.QueueWebhookServiceName || *svc.Path != keys.QueueWebhookPath || *svc.Port != 443 ||
		string(h.ClientConfig.CABundle) != string(secret.Data["ca.crt"]) {
		t.Fatalf("clientConfig %+v, want serve's Service in %s and the Secret's CA", h.ClientConfig, ns)
	}
	if len(hook.called()) == 0 {
		t.Fatal("install returned before the API server called the webhook")
	}
	for _, want := range []string{
		"validatingadmissionpolicy.admissionregistration.k8s.io/vc-queue-children deleted (not used in index mode)",
		"queueindex.admission.kubectl-vc.io/hierarchy deleted",
		"secret/" + keys.QueueWebhookSecretName + " (namespace " + ns + ") created",
		"service/" + keys.QueueWebhookServiceName + " (namespace " + ns + ") created",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("install --serve output lacks %q:\n%s", want, r.out)
		}
	}
	if _, err := vc.AdmissionV1alpha1().QueueIndexes().Get(ctx, "hierarchy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("queue index hierarchy left: %v", err)
	}
	// A queue the webhook refuses, through the Service.
	if _, err := vc.SchedulingV1beta1().Queues().Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "deny-me"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "any"}}, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "the stand-in refuses deny-me") {
		t.Fatalf("a create the webhook refuses: %v", err)
	}
	// The Deployment serves the webhook from the Secret.
	d, err := k.AppsV1().Deployments(ns).Get(ctx, "kubectl-vc-serve", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if !strings.Contains(strings.Join(c.Args, " "), "--webhook-bind-address=:9443 --webhook-cert-dir=/etc/kubectl-vc/webhook") ||
		len(d.Spec.Template.Spec.Volumes) != 1 || d.Spec.Template.Spec.Volumes[0].Secret.SecretName != keys.QueueWebhookSecretName {
		t.Errorf("serve's Deployment: args %q, volumes %+v", c.Args, d.Spec.Template.Spec.Volumes)
	}

	// Installed again: the same Secret, the same CA.
	out, err = cptest.Install(ctx, f, &install.Options{Selection: install.Selection{CRDs: true, Policies: true, Serve: true}, Image: "registry.example.com/kubectl-vc:test"})
	if err != nil {
		t.Fatalf("second install: %v\n%s", err, out)
	}
	again, err := k.CoreV1().Secrets(ns).Get(ctx, keys.QueueWebhookSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != secret.ResourceVersion || !strings.Contains(out, "secret/"+keys.QueueWebhookSecretName+" (namespace "+ns+") unchanged") {
		t.Errorf("the second install rotated the certificate:\n%s", out)
	}

	// A Secret that does not serve (its key lost) is made again, and the
	// webhook trusts the new CA: the stand-in, reading the Secret as
	// serve's pods do, answers with the new certificate.
	again.Data["tls.key"] = []byte("lost")
	if _, err := k.CoreV1().Secrets(ns).Update(ctx, again, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := len(hook.called())
	out, err = cptest.Install(ctx, f, &install.Options{Selection: install.Selection{Policies: true}})
	if err != nil {
		t.Fatalf("install with a broken Secret: %v\n%s", err, out)
	}
	if !strings.Contains(out, "configured (new certificate: tls.crt and tls.key are not a key pair") {
		t.Errorf("install does not say it made a new certificate:\n%s", out)
	}
	renewed, err := k.CoreV1().Secrets(ns).Get(ctx, keys.QueueWebhookSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := checkWebhookConfig(t, k); string(renewed.Data["ca.crt"]) == string(secret.Data["ca.crt"]) || string(h.ClientConfig.CABundle) != string(renewed.Data["ca.crt"]) {
		t.Error("the webhook does not trust the new certificate's CA")
	}
	if len(hook.called()) == n {
		t.Error("install returned before the API server called the webhook with the new certificate")
	}

	// serve's pods listed but not answering: install fails naming the
	// webhook and its Service.
	hook.srv.Close()
	out, err = cptest.Install(ctx, f, &install.Options{Timeout: 3 * time.Second, Selection: install.Selection{Policies: true}})
	if err == nil || !strings.Contains(err.Error(), keys.QueueWebhookName) || !strings.Contains(err.Error(), "service "+ns+"/"+keys.QueueWebhookServiceName) {
		t.Fatalf("install whose webhook does not answer: %v\n%s", err, out)
	}

	// uninstall removes the webhook, its Service and its Secret.
	if out, err := runUninstall(f, "", true, true); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if _, err := k.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, keys.QueueWebhookConfigName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("webhook configuration after uninstall: %v", err)
	}
	if _, err := k.CoreV1().Services(ns).Get(ctx, keys.QueueWebhookServiceName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("webhook Service after uninstall: %v", err)
	}
	if _, err := k.CoreV1().Secrets(ns).Get(ctx, keys.QueueWebhookSecretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("webhook Secret after uninstall: %v", err)
	}
	if l, err := k.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("policies after uninstall: %v %v", l, err)
	}
}

// TestQueueWebhookRealServe: install --webhook-url pointed at a real
// kubectl vc serve (outside the cluster, --webhook-bind-address and
// --webhook-cert-dir): install returns once it answers, and the API server
// has serve refuse a child queue above its parent and admit one within it.
func TestQueueWebhookRealServe(t *testing.T) {
	own, f := ownControlPlane(t)
	ctx := context.Background()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := own.WriteKubeconfig(kc, controlplane.AdminUser); err != nil {
		t.Fatal(err)
	}
	hook, err := cptest.NewWebhook(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cptest.StartServe(t, binary, kc, "--controllers=queue,queueindex", "--webhook-bind-address="+hook.Addr, "--webhook-cert-dir="+hook.CertDir)
	out, err := cptest.Install(ctx, f, &install.Options{Selection: install.Selection{CRDs: true, Policies: true, WebhookURL: hook.URL, WebhookCABundle: hook.CA}})
	if err != nil {
		t.Fatalf("install --webhook-url at serve: %v\n%s", err, out)
	}
	queues := versioned.NewForConfigOrDie(own.AdminConfig()).SchedulingV1beta1().Queues()
	cpu := func(n string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
	}
	if _, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "parent"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Capability: cpu("4")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// serve's cache sees the parent a moment after its create.
	eventually(t, "serve refuses a child above its parent", func() (bool, error) {
		_, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "child"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "parent", Capability: cpu("8")}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, nil
		}
		if !strings.Contains(err.Error(), `webhook "`+keys.QueueWebhookName+`"`) {
			return false, err
		}
		return true, nil
	})
	if _, err := queues.Create(ctx, &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "child"}, Spec: schedulingv1beta1.QueueSpec{Weight: 1, Parent: "parent", Capability: cpu("2")}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a child within its parent: %v", err)
	}

	// doctor finds the webhook as install made it, and one with a match
	// condition someone added (exempting some queue writes) differs; install
	// puts it back.
	admission := func() (status, message string) {
		t.Helper()
		out, stderr, _ := runBinary(t, kc, "doctor", "-o", "json")
		var rep struct {
			Checks []struct{ Check, Status, Message string }
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("doctor -o json: %v\n%s%s", err, out, stderr)
		}
		for _, c := range rep.Checks {
			if c.Check == "admission" {
				return c.Status, c.Message
			}
		}
		t.Fatalf("doctor has no admission finding:\n%s", out)
		return "", ""
	}
	if status, msg := admission(); status != "OK" {
		t.Fatalf("admission after install: %s %s", status, msg)
	}
	k := kubernetes.NewForConfigOrDie(own.AdminConfig())
	if _, err := k.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, keys.QueueWebhookConfigName, types.JSONPatchType,
		[]byte(`[{"op":"add","path":"/webhooks/0/matchConditions/-","value":{"name":"exempt","expression":"!object.metadata.name.startsWith('x-')"}}]`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if status, msg := admission(); status != "WARN" || !strings.Contains(msg, "ValidatingWebhookConfiguration "+keys.QueueWebhookConfigName+": webhooks[0].matchConditions") {
		t.Fatalf("admission with a match condition added: %s %s", status, msg)
	}
	if out, err := cptest.Install(ctx, f, &install.Options{Selection: install.Selection{Policies: true}}); err != nil {
		t.Fatalf("install again: %v\n%s", err, out)
	} else if !strings.Contains(out, "validatingwebhookconfiguration.admissionregistration.k8s.io/"+keys.QueueWebhookConfigName+" configured") {
		t.Errorf("install does not say it put the webhook back:\n%s", out)
	}
	if h := checkWebhookConfig(t, k); h.ClientConfig.URL == nil || *h.ClientConfig.URL != hook.URL {
		t.Errorf("a plain install moved the webhook: %+v", h.ClientConfig)
	}
	if status, msg := admission(); status != "OK" {
		t.Errorf("admission after install put the webhook back: %s %s", status, msg)
	}
}
