package doctor

import (
	"context"
	"fmt"
	"sort"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// The index mode's queue webhook (docs/admission.md): serve checks queue
// writes against the queues next to them, and with failurePolicy Fail the
// API server refuses every queue create and change of parent or
// resources while nothing answers it.

// checkQueueWebhook reports, in index mode, whether the webhook is
// configured and has somewhere to go: a Service with ready endpoints, or a
// URL (a serve outside the cluster, which doctor cannot reach for sure).
func (o *Options) checkQueueWebhook(ctx context.Context, check string) {
	const fix = "kubectl vc install --policies"
	vwc, err := o.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, keys.QueueWebhookConfigName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		o.add(check, Fail, fmt.Sprintf("admission is in index mode but its queue webhook (validatingwebhookconfiguration %s) is missing: queue writes are not checked against their parent and children, and a queue with children can be deleted", keys.QueueWebhookConfigName), fix)
		return
	}
	if err != nil {
		o.cannot(check, "validatingwebhookconfiguration "+keys.QueueWebhookConfigName, err)
		return
	}
	var hook *admissionregistrationv1.ValidatingWebhook
	for i := range vwc.Webhooks {
		if vwc.Webhooks[i].Name == keys.QueueWebhookName {
			hook = &vwc.Webhooks[i]
		}
	}
	if hook == nil {
		o.add(check, Fail, fmt.Sprintf("the queue webhook configuration %s has no webhook %s: it is not the one kubectl vc install makes", keys.QueueWebhookConfigName, keys.QueueWebhookName), fix)
		return
	}
	cc := hook.ClientConfig
	switch {
	case cc.URL != nil:
		o.add(check, OK, fmt.Sprintf("the queue webhook %s calls a serve outside the cluster at %s: while it does not answer there, every queue create that names a parent or sets resources, and every change of parent or resources, is refused", keys.QueueWebhookName, *cc.URL), "")
	case cc.Service != nil:
		o.checkWebhookService(ctx, check, cc.Service, len(cc.CABundle) > 0)
	default:
		o.add(check, Fail, fmt.Sprintf("the queue webhook %s points nowhere (no service, no url): every queue create that names a parent or sets resources, and every change of parent or resources, is refused", keys.QueueWebhookName), fix)
	}
}

// checkWebhookService: the Service exists and has a ready endpoint, and the
// webhook carries a CA to verify serve with.
func (o *Options) checkWebhookService(ctx context.Context, check string, svc *admissionregistrationv1.ServiceReference, ca bool) {
	name := svc.Namespace + "/" + svc.Name
	const refused = "every queue create that names a parent or sets resources, and every change of parent or resources, is refused"
	if _, err := o.kube.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		o.add(check, Fail, fmt.Sprintf("the queue webhook %s calls service %s, which does not exist: %s", keys.QueueWebhookName, name, refused),
			"kubectl vc install --serve (or, with serve outside the cluster, kubectl vc install --policies --webhook-url=...)", name)
		return
	} else if err != nil {
		o.cannot(check, "service "+name, err)
		return
	}
	slices, err := o.kube.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
	if err != nil {
		o.cannot(check, "the endpoints of service "+name, err)
		return
	}
	var ready []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			}
		}
	}
	sort.Strings(ready)
	switch {
	case len(ready) == 0:
		o.add(check, Fail, fmt.Sprintf("the queue webhook %s calls service %s, which has no ready endpoint (no serve pod ready): %s", keys.QueueWebhookName, name, refused),
			fmt.Sprintf("see why serve's pods are not ready: kubectl -n %s get pods -l app.kubernetes.io/name=%s", svc.Namespace, keys.ServeName), name)
	case !ca:
		o.add(check, Fail, fmt.Sprintf("the queue webhook %s calls service %s without a caBundle: the API server cannot verify serve's certificate, and %s", keys.QueueWebhookName, name, refused), "kubectl vc install --policies", name)
	default:
		o.add(check, OK, fmt.Sprintf("the queue webhook %s calls service %s, %d ready endpoint(s) (%s)", keys.QueueWebhookName, name, len(ready), some(ready, 3)), "")
	}
}
