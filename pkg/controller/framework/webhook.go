package framework

import (
	"context"
	"net/http"

	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
)

// Webhook is an admission webhook serve answers. Unlike a Controller it
// runs on every replica, the standby included: the API server calls any
// ready pod behind the webhook's Service, and a request must not wait for
// a lease. It reads its own cache, which it fills before it answers.
type Webhook interface {
	// Name is how the log and /readyz name it.
	Name() string
	// Path is where it answers on the webhook address.
	Path() string
	// Start starts what the webhook reads (its informers stop with ctx)
	// and returns its handler once they are filled, or the error that
	// kept them from filling (ctx ended, or the API server refused).
	Start(ctx context.Context, vc versioned.Interface) (http.Handler, error)
}
