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
	f.mu.Lock()
	defer f.mu.Unlock()
	if fac, ok := f.factories[fieldSelector]; ok {
		return fac
	}
	opts := append(append([]kubeinformers.SharedInformerOption(nil), f.opts...),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = fieldSelector }))
	fac := kubeinformers.NewSharedInformerFactoryWithOptions(f.client, 0, opts...)
	f.factories[fieldSelector] = fac
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
