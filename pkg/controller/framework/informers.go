package framework

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// FieldInformers hands out kube informer factories whose informers list
// and watch only the objects a field selector matches: one factory per
// selector, shared by every controller that asks for the same one, all with
// the transform of the shared factory.
//
// The podgroup controller acts on the pods of its schedulers only. With the
// shared pod informer it would cache every pod of the cluster, most of them
// kube-scheduler's; with one informer per scheduler name
// (spec.schedulerName=NAME, a selector the API server serves from its watch
// cache) the pods of other schedulers never reach the process.
type FieldInformers struct {
	client kubernetes.Interface
	opts   []kubeinformers.SharedInformerOption

	mu        sync.Mutex
	factories map[string]kubeinformers.SharedInformerFactory
}

// NewFieldInformers returns factories over client built with opts (the
// shared factory's transform, for instance) and the selector's filter.
func NewFieldInformers(client kubernetes.Interface, opts ...kubeinformers.SharedInformerOption) *FieldInformers {
	return &FieldInformers{client: client, opts: opts, factories: map[string]kubeinformers.SharedInformerFactory{}}
}

// For returns the factory whose informers see only the objects
// fieldSelector matches ("spec.schedulerName=volcano").
func (f *FieldInformers) For(fieldSelector string) kubeinformers.SharedInformerFactory {
	return f.factory("field:"+fieldSelector, kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = fieldSelector }))
}

// ForLabels returns the factory whose informers see only the objects
// labelSelector matches (serve's own objects, for one):
// the API server filters them, so the others never reach the process.
func (f *FieldInformers) ForLabels(labelSelector string) kubeinformers.SharedInformerFactory {
	return f.factory("label:"+labelSelector, kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = labelSelector }))
}

// ForNamespace returns the factory whose informers see only namespace.
func (f *FieldInformers) ForNamespace(namespace string) kubeinformers.SharedInformerFactory {
	return f.factory("namespace:"+namespace, kubeinformers.WithNamespace(namespace))
}

func (f *FieldInformers) factory(key string, filter kubeinformers.SharedInformerOption) kubeinformers.SharedInformerFactory {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fac, ok := f.factories[key]; ok {
		return fac
	}
	opts := append(append([]kubeinformers.SharedInformerOption(nil), f.opts...), filter)
	fac := kubeinformers.NewSharedInformerFactoryWithOptions(f.client, 0, opts...)
	f.factories[key] = fac
	return fac
}

// Start starts the informers asked for so far that are not running yet,
// as SharedInformerFactory.Start does.
func (f *FieldInformers) Start(stop <-chan struct{}) {
	for _, fac := range f.all() {
		fac.Start(stop)
	}
}

// WaitForCacheSync waits for every started informer, as
// SharedInformerFactory.WaitForCacheSync does: a type is false when one
// of its informers did not sync.
func (f *FieldInformers) WaitForCacheSync(stop <-chan struct{}) map[reflect.Type]bool {
	out := map[reflect.Type]bool{}
	for _, fac := range f.all() {
		for t, ok := range fac.WaitForCacheSync(stop) {
			if prev, seen := out[t]; !seen || prev {
				out[t] = ok
			}
		}
	}
	return out
}

// Shutdown stops every factory's informers and waits for them.
func (f *FieldInformers) Shutdown() {
	for _, fac := range f.all() {
		fac.Shutdown()
	}
}

func (f *FieldInformers) all() []kubeinformers.SharedInformerFactory {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]kubeinformers.SharedInformerFactory, 0, len(f.factories))
	for _, fac := range f.factories {
		out = append(out, fac)
	}
	return out
}

// KubeInformerFactoryForLabels is the factory of the objects labelSelector
// matches; without FieldInformers, the shared factory (see
// KubeInformerFactoryFor).
func (o *ControllerOption) KubeInformerFactoryForLabels(labelSelector string) kubeinformers.SharedInformerFactory {
	if o.FieldInformers == nil {
		return o.KubeInformerFactory
	}
	return o.FieldInformers.ForLabels(labelSelector)
}

// KubeInformerFactoryForNamespace is the factory of namespace's objects;
// without FieldInformers, the shared factory (see KubeInformerFactoryFor).
func (o *ControllerOption) KubeInformerFactoryForNamespace(namespace string) kubeinformers.SharedInformerFactory {
	if o.FieldInformers == nil {
		return o.KubeInformerFactory
	}
	return o.FieldInformers.ForNamespace(namespace)
}

// StartInformers starts the informers asked for since the manager started
// the factories (a controller that sets up informers late, once a CRD is
// served).
func (o *ControllerOption) StartInformers(stop <-chan struct{}) {
	o.KubeInformerFactory.Start(stop)
	o.VolcanoInformerFactory.Start(stop)
	if o.FieldInformers != nil {
		o.FieldInformers.Start(stop)
	}
}

// KubeInformerFactoryFor is the factory of the objects fieldSelector
// matches. Without FieldInformers (informers wired by hand, as unit tests
// do) it is the shared factory, which sees everything: a controller must
// still check what it reads as if its cache were unfiltered.
func (o *ControllerOption) KubeInformerFactoryFor(fieldSelector string) kubeinformers.SharedInformerFactory {
	if o.FieldInformers == nil {
		return o.KubeInformerFactory
	}
	return o.FieldInformers.For(fieldSelector)
}
