package podgroup

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// ownerKind is everything the controller needs to know about one kind of
// pod controller. Each kind-dependent step (matching an owner reference,
// reading the owner from the cache, the event handler, the owner's sync,
// the cache trim) reads this table instead of switching on the kind, so a
// new kind is one more row.
type ownerKind struct {
	kind kind
	// gvk is matched against a pod's owner references by group and kind
	// only: every served version of a kind names the same object.
	gvk schema.GroupVersionKind
	// path says whether the owner has a sync of its own (an event handler
	// that brings its pods' group up to date). The kind is cached when it
	// has a path or when owners' annotations are inherited.
	path func(c *Controller) bool
	// scalable kinds lose their group when scaled to zero. The others keep
	// it, as Volcano's do (a finished Job's group stays until the garbage
	// collector takes both).
	scalable bool
	// revisioned kinds roll their pods by revision: only pods labelled
	// with the update revision are the template of the group, and a new
	// pod brings its owner's group up to date (see addPod).
	revisioned bool
	// informer is the kind's shared informer.
	informer func(f kubeinformers.SharedInformerFactory) cache.SharedIndexInformer
	// view reads an object of the kind; nil for an object of another type.
	view func(obj any) *ownerView
	// reads is what the controller reads of the kind (CacheReads): what
	// view reads, plus the metadata that is always kept but for the
	// annotations, of which only those ownerAnnotation names.
	reads framework.CacheRead
}

// object is a Kubernetes object: its metadata for the group's name and
// owner, and a runtime.Object to record events on.
type object interface {
	metav1.Object
	runtime.Object
}

// ownerView is what the controller reads of one owner, whatever its kind.
type ownerView struct {
	obj      object
	template *corev1.PodSpec
	// selector is nil while the API server has not defaulted it (a Job's).
	selector *metav1.LabelSelector
	replicas *int32 // scalable kinds only
	revision string // revisioned kinds only: status.updateRevision
}

// replicaSets and statefulSets are the WorkLoadSupport path; Jobs and
// DaemonSets have a path only while owners' annotations are inherited,
// because only then do their pods wait for them (syncPod) and need their
// add to be grouped.
var ownerKinds = []*ownerKind{
	{
		kind: replicaSetKind, gvk: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		path: workLoadSupport, scalable: true,
		informer: func(f kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().ReplicaSets().Informer()
		},
		view: func(obj any) *ownerView {
			w, ok := obj.(*appsv1.ReplicaSet)
			if !ok {
				return nil
			}
			return &ownerView{obj: w, template: &w.Spec.Template.Spec, selector: w.Spec.Selector, replicas: w.Spec.Replicas}
		},
		reads: framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *appsv1.ReplicaSet) {
			dst.Spec.Replicas = src.Spec.Replicas
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.Template.Spec.SchedulerName = src.Spec.Template.Spec.SchedulerName
		}), func(_ *appsv1.ReplicaSet, key string) bool { return ownerAnnotation(key) }),
	},
	{
		kind: statefulSetKind, gvk: appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		path: workLoadSupport, scalable: true, revisioned: true,
		informer: func(f kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().StatefulSets().Informer()
		},
		view: func(obj any) *ownerView {
			w, ok := obj.(*appsv1.StatefulSet)
			if !ok {
				return nil
			}
			return &ownerView{obj: w, template: &w.Spec.Template.Spec, selector: w.Spec.Selector, replicas: w.Spec.Replicas,
				revision: w.Status.UpdateRevision}
		},
		reads: framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *appsv1.StatefulSet) {
			dst.Spec.Replicas = src.Spec.Replicas
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.Template.Spec.SchedulerName = src.Spec.Template.Spec.SchedulerName
			dst.Status.UpdateRevision = src.Status.UpdateRevision
		}), func(_ *appsv1.StatefulSet, key string) bool { return ownerAnnotation(key) }),
	},
	{
		kind: daemonSetKind, gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet"),
		path: inheritsAnnotations,
		informer: func(f kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().DaemonSets().Informer()
		},
		view: func(obj any) *ownerView {
			w, ok := obj.(*appsv1.DaemonSet)
			if !ok {
				return nil
			}
			return &ownerView{obj: w, template: &w.Spec.Template.Spec, selector: w.Spec.Selector}
		},
		reads: framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *appsv1.DaemonSet) {
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.Template.Spec.SchedulerName = src.Spec.Template.Spec.SchedulerName
		}), func(_ *appsv1.DaemonSet, key string) bool { return ownerAnnotation(key) }),
	},
	{
		kind: jobKind, gvk: batchv1.SchemeGroupVersion.WithKind("Job"),
		path: inheritsAnnotations,
		informer: func(f kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().Jobs().Informer()
		},
		view: func(obj any) *ownerView {
			w, ok := obj.(*batchv1.Job)
			if !ok {
				return nil
			}
			return &ownerView{obj: w, template: &w.Spec.Template.Spec, selector: w.Spec.Selector}
		},
		reads: framework.ReadsAnnotations(framework.ReadsOnly(func(dst, src *batchv1.Job) {
			dst.Spec.Selector = src.Spec.Selector
			dst.Spec.Template.Spec.SchedulerName = src.Spec.Template.Spec.SchedulerName
		}), func(_ *batchv1.Job, key string) bool { return ownerAnnotation(key) }),
	},
}

func workLoadSupport(c *Controller) bool     { return c.workloads }
func inheritsAnnotations(c *Controller) bool { return c.inherit }

// ownerKindOf is the table row of a request kind; nil for pods and queues.
func ownerKindOf(k kind) *ownerKind {
	for _, o := range ownerKinds {
		if o.kind == k {
			return o
		}
	}
	return nil
}

// ownerKindOfRef is the table row of an owner reference; nil when the
// controller does not read owners of that kind.
func ownerKindOfRef(ref *metav1.OwnerReference) *ownerKind {
	group := ref.APIVersion
	if i := strings.Index(group, "/"); i >= 0 {
		group = group[:i]
	}
	for _, o := range ownerKinds {
		if group == o.gvk.Group && ref.Kind == o.gvk.Kind {
			return o
		}
	}
	return nil
}

// cachedOwner reads an owner from the informer cache; nil when it is not
// there, or when its kind is not cached at all (neither inherited from nor
// given a path), which for a reader is the same: it says nothing.
func (c *Controller) cachedOwner(o *ownerKind, ns, name string) (*ownerView, error) {
	idx := c.ownerCaches[o.kind]
	if idx == nil {
		return nil, nil
	}
	obj, exists, err := idx.GetByKey(ns + "/" + name)
	if err != nil || !exists {
		return nil, err
	}
	return o.view(obj), nil
}
