package framework

import (
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// CacheRead says what a controller reads of one type of object it caches.
// Every controller declares one per cached type (Controller.CacheReads);
// the shared informers then keep, of each type, the union of what the
// running controllers read, and nothing else. A pod in the cache is a
// tenth of a pod on the wire once its containers' env, volumes, probes and
// statuses are gone, and a cluster may have hundreds of thousands.
//
// A type is trimmed only while every running controller that caches it
// declared its reads with ReadsOnly; one ReadsAll, or a type nobody
// declared, keeps the whole object (minus managedFields, which no
// controller reads). A trimmed object must never be written back with a
// full Update: the fields dropped here would be erased on the server.
// Controllers write with patches and server-side apply for that reason.
type CacheRead struct {
	typ    reflect.Type
	newObj func() any
	keep   func(dst, src any, in *Interner) // nil: the whole object is read
	// annotation says which annotations of an object the controller
	// reads (ReadsAnnotations); nil: all of them.
	annotation func(src any, key string) bool
}

// ReadsAnnotations declares that, of the annotations of the objects r is
// about, the controller reads only those keep says yes to (given the
// object as it came, before any trimming, and the key). While every
// controller caching the type declares so, the cache keeps only the
// annotations one of them reads: a tenant's annotations (256 KiB an
// object) cost serve nothing once decoded. r must be a ReadsOnly of P.
func ReadsAnnotations[T any, P objectPointer[T]](r CacheRead, keep func(src P, key string) bool) CacheRead {
	if r.typ != reflect.TypeFor[P]() || r.keep == nil {
		panic("framework: ReadsAnnotations of " + reflect.TypeFor[P]().String() + " on a read of " + r.typ.String())
	}
	r.annotation = func(src any, key string) bool { return keep(src.(P), key) }
	return r
}

// objectPointer is a pointer to a Kubernetes object type with ObjectMeta.
type objectPointer[T any] interface {
	*T
	runtime.Object
	metav1.ObjectMetaAccessor
}

// ReadsAll declares that the controller reads objects of type P whole.
func ReadsAll[T any, P objectPointer[T]]() CacheRead {
	return CacheRead{typ: reflect.TypeFor[P](), newObj: func() any { return P(new(T)) }}
}

// ReadsOnly declares that the controller reads, of objects of type P, the
// metadata (always kept: names, UIDs, labels, annotations, owners,
// deletion state, resourceVersion) and the fields keep copies from src to
// dst. keep must only copy: dst starts empty apart from the metadata and
// may already hold what other controllers keep.
func ReadsOnly[T any, P objectPointer[T]](keep func(dst, src P)) CacheRead {
	return CacheRead{
		typ:    reflect.TypeFor[P](),
		newObj: func() any { return P(new(T)) },
		keep:   func(dst, src any, _ *Interner) { keep(dst.(P), src.(P)) },
	}
}

// ReadsOnlyShared is ReadsOnly for a controller whose kept fields are
// often equal across objects: keep may hand them to the Interner (e.g.
// in.ResourceList) so that equal values are stored once.
func ReadsOnlyShared[T any, P objectPointer[T]](keep func(dst, src P, in *Interner)) CacheRead {
	return CacheRead{
		typ:    reflect.TypeFor[P](),
		newObj: func() any { return P(new(T)) },
		keep:   func(dst, src any, in *Interner) { keep(dst.(P), src.(P), in) },
	}
}

// CachedByOthers says whether a controller among running other than self
// declares that it caches objects of type T: the shared factory then lists
// and watches them whatever self does, and self reading them another way
// would have the API server send them twice.
func CachedByOthers[T any, P objectPointer[T]](running []Controller, self string) bool {
	typ := reflect.TypeFor[P]()
	for _, c := range running {
		if c.Name() == self {
			continue
		}
		for _, r := range c.CacheReads() {
			if r.typ == typ {
				return true
			}
		}
	}
	return false
}

// trim is the plan for one trimmed type: the keep functions of every
// controller that caches it.
type trim struct {
	newObj func() any
	keeps  []func(dst, src any, in *Interner)
	// annotations are the readers' annotation declarations; allAnnotations
	// is true when a reader declared none (it reads them all).
	annotations    []func(src any, key string) bool
	allAnnotations bool
}

// annotationsRead are the annotations of src some reader reads.
func (p *trim) annotationsRead(src any, all map[string]string) map[string]string {
	if p.allAnnotations || len(all) == 0 {
		return all
	}
	var out map[string]string
	for k, v := range all {
		for _, read := range p.annotations {
			if read(src, k) {
				if out == nil {
					out = map[string]string{}
				}
				out[k] = v
				break
			}
		}
	}
	return out
}

// CacheTransform is the informer transform for a process running ctrls:
// managedFields are dropped from every object, and each type every
// reader of which declared ReadsOnly is cut down to the union of what
// they read (of its annotations too, where every reader declared
// ReadsAnnotations), its labels and annotations shared with equal ones of
// other objects (Interner). It is idempotent, as informer transforms must be.
func CacheTransform(ctrls ...Controller) cache.TransformFunc {
	plans := map[reflect.Type]*trim{}
	whole := map[reflect.Type]bool{}
	for _, c := range ctrls {
		for _, r := range c.CacheReads() {
			if r.keep == nil {
				whole[r.typ] = true
				continue
			}
			p := plans[r.typ]
			if p == nil {
				p = &trim{newObj: r.newObj}
				plans[r.typ] = p
			}
			p.keeps = append(p.keeps, r.keep)
			if r.annotation == nil {
				p.allAnnotations = true
			} else {
				p.annotations = append(p.annotations, r.annotation)
			}
		}
	}
	for t := range whole {
		delete(plans, t)
	}
	in := NewInterner()
	return func(obj any) (any, error) {
		src, ok := obj.(metav1.ObjectMetaAccessor)
		if !ok {
			return obj, nil
		}
		meta, ok := src.GetObjectMeta().(*metav1.ObjectMeta)
		if !ok {
			return obj, nil
		}
		meta.ManagedFields = nil
		p := plans[reflect.TypeOf(obj)]
		if p == nil {
			return obj, nil
		}
		// kubectl apply's copy of the whole object is often the largest
		// annotation; nobody reads it from a trimmed cache.
		if _, ok := meta.Annotations[corev1.LastAppliedConfigAnnotation]; ok {
			meta.Annotations = maps.Clone(meta.Annotations)
			delete(meta.Annotations, corev1.LastAppliedConfigAnnotation)
		}
		dst := p.newObj()
		dstMeta := dst.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
		*dstMeta = *meta
		dstMeta.Labels = in.StringMap(meta.Labels)
		dstMeta.Annotations = in.StringMap(p.annotationsRead(obj, meta.Annotations))
		if ro, ok := obj.(runtime.Object); ok {
			dst.(runtime.Object).GetObjectKind().SetGroupVersionKind(ro.GetObjectKind().GroupVersionKind())
		}
		for _, keep := range p.keeps {
			keep(dst, obj, in)
		}
		return dst, nil
	}
}

// Type is the pointer type of the objects the read is about, as informer
// factories key their informers.
func (r CacheRead) Type() reflect.Type { return r.typ }

// KeepPodConditions is for ReadsOnly functions of pods: it copies the
// conditions of the given types from src to dst, skipping those dst already
// holds (another controller may keep the same type). A kubelet writes half
// a dozen conditions per pod; a controller usually reads one.
func KeepPodConditions(dst, src *corev1.Pod, types ...corev1.PodConditionType) {
	for _, c := range src.Status.Conditions {
		if !slices.Contains(types, c.Type) || slices.ContainsFunc(dst.Status.Conditions,
			func(d corev1.PodCondition) bool { return d.Type == c.Type }) {
			continue
		}
		dst.Status.Conditions = append(dst.Status.Conditions, c)
	}
}
