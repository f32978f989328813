// Package queuewebhook is the admission webhook of 'kubectl vc serve' for
// queue writes in the index mode (docs/admission.md): the rules between a
// queue and its parent and children (rules.CheckQueueWrite), answered with
// a lookup in serve's cache. The ValidatingAdmissionPolicies of the index
// mode would have to read an index of every queue that may be a parent,
// converted whole at each request; the webhook's cost does not grow with
// the queues. PodGroups, Jobs and queue deletes stay on the policies:
// their indexes hold only the closed queues and the parents. The children
// of a deleted queue (rules.CheckQueueDelete) are still answered, for the
// configuration of an earlier release, which sent deletes here, until
// install replaces it.
package queuewebhook

import (
	"context"
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
	"github.com/kubectl-vc/kubectl-vc/pkg/rules"
	"github.com/kubectl-vc/kubectl-vc/plugins/internal/quantityguard"
)

// Name is the webhook's name in serve's log and /readyz.
const Name = "queuewebhook"

// byParent indexes the cached queues by their effective parent.
const byParent = "parent"

// lookupTimeout bounds the one request a review may make of the API
// server (a parent not in the cache yet), well within the API server's
// 5 s call timeout (the webhook configuration's timeoutSeconds).
const lookupTimeout = 2 * time.Second

// Webhook answers the AdmissionReviews of queue writes.
type Webhook struct{}

var _ framework.Webhook = (*Webhook)(nil)

// New returns the webhook; Start fills its cache.
func New() *Webhook { return &Webhook{} }

func (*Webhook) Name() string { return Name }
func (*Webhook) Path() string { return keys.QueueWebhookPath }

// Start caches the queues, trimmed to what the rules read, and returns the
// handler once the cache is filled.
func (*Webhook) Start(ctx context.Context, vc versioned.Interface) (http.Handler, error) {
	f := vcinformers.NewSharedInformerFactoryWithOptions(vc, 0, vcinformers.WithTransform(trim))
	// Any tenant who may write a queue may write a quantity that takes
	// minutes to parse; the guarded informer leaves it out.
	if err := quantityguard.Register(f, vc); err != nil {
		return nil, err
	}
	inf := f.Scheduling().V1beta1().Queues().Informer()
	if err := inf.AddIndexers(cache.Indexers{byParent: parentOf}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		f.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("the queue cache did not fill")
	}
	rc, _ := quantityguard.REST(vc)
	return newHandler(inf.GetIndexer(), rc), nil
}

// parentOf is the byParent index: a queue under its effective parent.
func parentOf(obj any) ([]string, error) {
	q, ok := obj.(*v1beta1.Queue)
	if !ok {
		return nil, nil
	}
	if p := rules.EffectiveParent(q); p != "" {
		return []string{p}, nil
	}
	return nil, nil
}

// trim keeps of a queue what the rules read: its name, parent, resource
// lists and state. Labels, annotations and managed fields are any
// tenant's to fill and are not kept.
func trim(obj any) (any, error) {
	q, ok := obj.(*v1beta1.Queue)
	if !ok {
		return obj, nil
	}
	out := &v1beta1.Queue{}
	out.Name, out.ResourceVersion = q.Name, q.ResourceVersion
	out.Spec.Parent = q.Spec.Parent
	out.Spec.Capability, out.Spec.Deserved = q.Spec.Capability, q.Spec.Deserved
	out.Spec.Guarantee.Resource = q.Spec.Guarantee.Resource
	out.Status.State = q.Status.State
	return out, nil
}

// neighbours are the queues next to the one under review, from the cache.
type neighbours struct {
	ctx context.Context
	h   *handler
}

var _ rules.QueueNeighbours = neighbours{}

// Queue is the named queue from the cache, or, when the cache does not
// hold it, from the API server: a parent created a moment before its
// child may not have reached the cache yet, and a script that makes both
// in a row expects the child held to the parent. A queue that exists
// nowhere (nil) bounds nothing, as in the policies.
func (n neighbours) Queue(name string) *v1beta1.Queue {
	if obj, ok, _ := n.h.queues.GetByKey(name); ok {
		return obj.(*v1beta1.Queue)
	}
	// A name no queue can have (spec.parent is any string the CRD takes)
	// exists nowhere: no request, and no log line for any tenant to fill.
	if n.h.rest == nil || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(n.ctx, lookupTimeout)
	defer cancel()
	q, err := quantityguard.Get[v1beta1.Queue, *v1beta1.Queue](ctx, n.h.rest, "queues", "", name)
	if err != nil {
		// A queue that exists nowhere is the common case (a parent named
		// before it is made); anything else (RBAC, the API server) means
		// the rule was checked without the parent, and is worth a line.
		if !apierrors.IsNotFound(err) {
			klog.FromContext(ctx).Info("could not read a parent the cache does not hold; the queue is checked without it", "queue", name, "err", err)
		}
		return nil
	}
	return q
}

// Children are the queues whose effective parent is parent.
func (n neighbours) Children(parent string) []*v1beta1.Queue {
	objs, err := n.h.queues.ByIndex(byParent, parent)
	if err != nil {
		return nil
	}
	out := make([]*v1beta1.Queue, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*v1beta1.Queue))
	}
	return out
}

func newHandler(queues cache.Indexer, rc rest.Interface) *handler {
	return &handler{queues: queues, rest: rc, slots: make(chan struct{}, maxInFlight)}
}
