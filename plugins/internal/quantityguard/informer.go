package quantityguard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
	vcinformers "github.com/kubectl-vc/kubectl-vc/pkg/client/informers/externalversions"
)

// object is a pointer to a Go type of the API.
type object[T any] interface {
	*T
	runtime.Object
}

// listWatch lists and watches one resource of scheduling.volcano.sh/v1beta1
// in every namespace as raw JSON, each object sanitized before it is
// decoded.
type listWatch[T any, P object[T]] struct {
	rc       rest.Interface
	resource string
	// list makes the list object of the items.
	list func(items []T, meta metav1.ListMeta) runtime.Object
}

var _ cache.ListerWatcherWithContext = (*listWatch[v1beta1.Queue, *v1beta1.Queue])(nil)

// IsWatchListSemanticsUnSupported: the reflector lists, then watches (this
// list-watch does not stream the initial list in a watch).
func (lw *listWatch[T, P]) IsWatchListSemanticsUnSupported() bool { return true }

func (lw *listWatch[T, P]) List(opts metav1.ListOptions) (runtime.Object, error) {
	return lw.ListWithContext(context.Background(), opts)
}

func (lw *listWatch[T, P]) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return lw.WatchWithContext(context.Background(), opts)
}

func (lw *listWatch[T, P]) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	body, err := lw.rc.Get().Resource(lw.resource).VersionedParams(&opts, metav1.ParameterCodec).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var l struct {
		Metadata metav1.ListMeta   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("list %s: %w", lw.resource, err)
	}
	items := make([]T, len(l.Items))
	for i, raw := range l.Items {
		if err := lw.decode(klog.FromContext(ctx), raw, P(&items[i])); err != nil {
			return nil, fmt.Errorf("list %s: %w", lw.resource, err)
		}
	}
	return lw.list(items, l.Metadata), nil
}

func (lw *listWatch[T, P]) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := lw.rc.Get().Resource(lw.resource).VersionedParams(&opts, metav1.ParameterCodec).
		SetHeader("Accept", "application/json").Stream(ctx)
	if err != nil {
		return nil, err
	}
	return watch.NewStreamWatcher(&events[T, P]{lw: lw, logger: klog.FromContext(ctx), body: body, dec: json.NewDecoder(body)},
		apierrors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// decode sanitizes one object and decodes it into obj, without its type
// meta, as a typed client's informer holds it; logger says what it removed.
func (lw *listWatch[T, P]) decode(logger klog.Logger, raw []byte, obj P) error {
	clean, removed, err := sanitize(raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(clean, obj); err != nil {
		return err
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if len(removed) > 0 {
		report(logger, lw.resource, obj, removed)
	}
	return nil
}

// reported limits the log to one line per object version.
var reported sync.Map

func report(logger klog.Logger, resource string, obj runtime.Object, removed []dropped) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	key := resource + "/" + m.GetNamespace() + "/" + m.GetName() + "@" + m.GetResourceVersion()
	if _, seen := reported.LoadOrStore(key, true); seen {
		return
	}
	fields := make([]string, len(removed))
	for i, d := range removed {
		fields[i] = d.String()
	}
	logger.Info("ignored quantities that would take minutes to parse (exponent over 4 digits or over 100 digits in a row)",
		"resource", resource, "namespace", m.GetNamespace(), "name", m.GetName(), "fields", fields)
}

// events decodes a watch stream's events.
type events[T any, P object[T]] struct {
	lw *listWatch[T, P]
	// logger is the watch's (its context's).
	logger klog.Logger
	body   io.Closer
	dec    *json.Decoder
}

func (e *events[T, P]) Decode() (watch.EventType, runtime.Object, error) {
	var ev metav1.WatchEvent
	if err := e.dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	typ := watch.EventType(ev.Type)
	if typ == watch.Error {
		st := &metav1.Status{}
		if err := json.Unmarshal(ev.Object.Raw, st); err != nil {
			return "", nil, fmt.Errorf("watch %s: %w", e.lw.resource, err)
		}
		return typ, st, nil
	}
	obj := P(new(T))
	if err := e.lw.decode(e.logger, ev.Object.Raw, obj); err != nil {
		return "", nil, fmt.Errorf("watch %s: %w", e.lw.resource, err)
	}
	return typ, obj, nil
}

func (e *events[T, P]) Close() { _ = e.body.Close() }

// ours remembers the informers made here, to tell them from the generated
// ones.
var ours sync.Map

// Register makes the factory's Queue informer the guarded one. It must
// run before anything asks the factory for it (a controller's Initialize,
// first): when the factory already holds one it returns an error. With a
// client that has no REST client (a fake clientset) it leaves the factory
// alone.
//
// PodGroups are not read through the factory against an API server: the
// controllers read their rows from Tables, whose cells are strings
// (podgrouprows), and the few they change with Get and Patch below. A
// factory informer registered here would be started, and stream every
// podgroup whole, even with nobody reading it.
func Register(f vcinformers.SharedInformerFactory, vc versioned.Interface) error {
	rc, ok := REST(vc)
	if !ok {
		return nil
	}
	queues := &listWatch[v1beta1.Queue, *v1beta1.Queue]{rc: rc, resource: "queues",
		list: func(items []v1beta1.Queue, m metav1.ListMeta) runtime.Object {
			return &v1beta1.QueueList{ListMeta: m, Items: items}
		}}
	inf := f.InformerFor(&v1beta1.Queue{}, func(_ versioned.Interface, resync time.Duration) cache.SharedIndexInformer {
		inf := cache.NewSharedIndexInformer(queues, &v1beta1.Queue{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		ours.Store(inf, true)
		return inf
	})
	if _, ok := ours.Load(inf); !ok {
		return fmt.Errorf("the Queue informer was made before the guarded one: register it first")
	}
	return nil
}

// REST is the REST client of scheduling.volcano.sh/v1beta1 behind vc, or
// false for a client without one (a fake clientset).
func REST(vc versioned.Interface) (rest.Interface, bool) {
	rc := vc.SchedulingV1beta1().RESTClient()
	if r, ok := rc.(*rest.RESTClient); !ok || r == nil {
		return nil, false
	}
	return rc, true
}

// Get reads an object of scheduling.volcano.sh/v1beta1 (namespace "" for
// a queue) and decodes it as the guarded informers do (see Patch).
func Get[T any, P object[T]](ctx context.Context, rc rest.Interface, resource, namespace, name string) (P, error) {
	body, err := rc.Get().NamespaceIfScoped(namespace, namespace != "").Resource(resource).Name(name).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return decodeOne[T, P](ctx, resource, name, body)
}

// Patch patches an object of scheduling.volcano.sh/v1beta1 (namespace ""
// for a queue) and decodes the object the API server returns as the
// guarded informers do: a typed client's Patch would parse whatever
// quantities a tenant wrote into the object, and hang in them.
func Patch[T any, P object[T]](ctx context.Context, rc rest.Interface, resource, namespace, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (P, error) {
	body, err := rc.Patch(pt).NamespaceIfScoped(namespace, namespace != "").Resource(resource).Name(name).SubResource(subresources...).
		VersionedParams(&opts, metav1.ParameterCodec).Body(data).SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	return decodeOne[T, P](ctx, resource, name, body)
}

// decodeOne decodes one object as the guarded informers do.
func decodeOne[T any, P object[T]](ctx context.Context, resource, name string, body []byte) (P, error) {
	lw := &listWatch[T, P]{resource: resource}
	obj := P(new(T))
	if err := lw.decode(klog.FromContext(ctx), body, obj); err != nil {
		return nil, fmt.Errorf("%s %s: %w", resource, name, err)
	}
	return obj, nil
}
