package podgroup

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// schedulerField is the pod field the controller's informers select on.
const schedulerField = "spec.schedulerName"

// podCache is the controller's view of the pods: one informer per
// scheduler it serves, each listing and watching only that scheduler's
// pods (spec.schedulerName is immutable, so a pod stays in one of them for
// its life). Pods of other schedulers (kube-scheduler's, in most clusters
// the great majority) are never sent to the process, let alone cached.
// It is a PodLister over the union of the informers' caches.
type podCache struct {
	informers []cache.SharedIndexInformer
	listers   []corelisters.PodLister
}

var _ corelisters.PodLister = (*podCache)(nil)

// newPodCache asks opt for the informer of each scheduler's pods.
func newPodCache(opt *framework.ControllerOption, schedulers []string) *podCache {
	pc := &podCache{}
	seen := map[kubeinformers.SharedInformerFactory]bool{}
	for _, s := range schedulers {
		f := opt.KubeInformerFactoryFor(schedulerField + "=" + s)
		// Without field informers every name gets the one shared factory,
		// whose pod informer is kept once. (Informer() wraps the shared
		// informer anew on every call, so it cannot tell.)
		if seen[f] {
			continue
		}
		seen[f] = true
		inf := f.Core().V1().Pods()
		pc.informers = append(pc.informers, inf.Informer())
		pc.listers = append(pc.listers, inf.Lister())
	}
	return pc
}

// List implements corelisters.PodLister.
func (pc *podCache) List(sel labels.Selector) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, l := range pc.listers {
		ps, err := l.List(sel)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

// Pods implements corelisters.PodLister.
func (pc *podCache) Pods(ns string) corelisters.PodNamespaceLister {
	return podsIn{pc: pc, ns: ns}
}

type podsIn struct {
	pc *podCache
	ns string
}

func (p podsIn) List(sel labels.Selector) ([]*corev1.Pod, error) {
	var out []*corev1.Pod
	for _, l := range p.pc.listers {
		ps, err := l.Pods(p.ns).List(sel)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func (p podsIn) Get(name string) (*corev1.Pod, error) {
	for _, l := range p.pc.listers {
		pod, err := l.Pods(p.ns).Get(name)
		if err == nil || !apierrors.IsNotFound(err) {
			return pod, err
		}
	}
	return nil, apierrors.NewNotFound(corev1.Resource("pod"), name)
}

// addIndexers adds the indexers to every informer.
func (pc *podCache) addIndexers(ix cache.Indexers) error {
	for _, inf := range pc.informers {
		if err := inf.AddIndexers(ix); err != nil {
			return err
		}
	}
	return nil
}

// addEventHandler adds h to every informer.
func (pc *podCache) addEventHandler(h cache.ResourceEventHandler) error {
	for _, inf := range pc.informers {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}

// byIndex is the pods under one value of an index, over every informer.
func (pc *podCache) byIndex(index, value string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, inf := range pc.informers {
		objs, err := inf.GetIndexer().ByIndex(index, value)
		if err != nil {
			continue
		}
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok {
				out = append(out, p)
			}
		}
	}
	return out
}

// countIndex is the number of pods under one value of an index.
func (pc *podCache) countIndex(index, value string) int {
	n := 0
	for _, inf := range pc.informers {
		if keys, err := inf.GetIndexer().IndexKeys(index, value); err == nil {
			n += len(keys)
		}
	}
	return n
}

// hasSynced is one InformerSynced for all the informers.
func (pc *podCache) hasSynced() bool {
	return !slices.ContainsFunc(pc.informers, func(inf cache.SharedIndexInformer) bool { return !inf.HasSynced() })
}
