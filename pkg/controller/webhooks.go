package controller

// The admission webhooks' HTTPS server: started before leader election, so
// that every replica answers, and only once each webhook's cache is
// filled, so that no request is decided on an empty cache (the API server
// retries nothing: with failurePolicy Fail, a webhook that does not answer
// refuses the write, and one that answers from an empty cache would let
// through what it should refuse).

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"

	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// webhookConnsPerAddr bounds the connections from one address to the
// webhook: above the other endpoints' maxConnsPerAddr, since the API
// server is one address that calls once per write in flight.
const webhookConnsPerAddr = 64

// startWebhooks fills each webhook's cache, then serves them on
// o.WebhookAddr. It returns nil, nil when there is nothing to serve.
func startWebhooks(ctx context.Context, o Config, vc versioned.Interface, p *progress) (*http.Server, error) {
	if disabled(o.WebhookAddr) || len(o.Webhooks) == 0 {
		return nil, nil
	}
	logger := klog.FromContext(ctx)
	certs, err := watchedCerts(ctx, o, "--webhook-cert-dir", "webhook", o.WebhookCertDir)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	for _, w := range o.Webhooks {
		p.wait("the " + w.Name() + " webhook's cache to fill")
		h, err := w.Start(klog.NewContext(ctx, klog.LoggerWithName(logger, w.Name())), vc)
		if err != nil {
			return nil, fmt.Errorf("webhook %s: %w", w.Name(), err)
		}
		mux.Handle(w.Path(), h)
	}
	p.done()
	raw, err := net.Listen("tcp", o.WebhookAddr)
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	limited := newLimitListener(raw, maxConns, webhookConnsPerAddr)
	s := newServer(mux, false)
	s.ConnState = limited.connState
	s.BaseContext = func(net.Listener) context.Context { return klog.NewContext(context.Background(), logger) }
	ln := tls.NewListener(limited, certs.TLSConfig())
	logger.Info("serving", "endpoint", "admission webhooks", "address", ln.Addr().String(), "scheme", "https")
	go func() { _ = s.Serve(ln) }()
	return s, nil
}
