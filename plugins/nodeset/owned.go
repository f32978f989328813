package nodeset

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// What serve caches of the Services, PodDisruptionBudgets and ConfigMaps
// of the cluster: its own, and nothing else (docs/security.md, "What
// serve caches"). Every one serve makes (the headless Service, the PDB,
// the ssh ConfigMap, and its pods) carries keys.LabelManagedBy=ServeName,
// and the informers of those three kinds select that label: any
// namespace may hold any number of ConfigMaps of 1 MiB, and the API
// server sends serve none of them.
//
// Upgrades: an object an older serve (or Slinky's operator) made has no
// label, so the cache does not show it; the create of its name then fails
// with AlreadyExists, the object is read once from the API server and, if
// this NodeSet controls it, labelled (with the rest of what serve puts
// right: an apply with the read resourceVersion as precondition), after
// which the cache holds it. One of that name someone else made is left
// alone as before (a NameTaken condition).
//
// Slinky's RestApi Services (made by Slinky's operator) are read only in
// the namespaces --slurm-namespaces names, the only ones where serve
// follows a RestApi: one Service informer per such namespace.

// ownSelector selects serve's own objects.
var ownSelector = labels.SelectorFromSet(labels.Set{keys.LabelManagedBy: keys.ServeName}).String()

// owned is m (cloned) with serve's label.
func owned(m map[string]string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[keys.LabelManagedBy] = keys.ServeName
	return out
}

// labelledOwn says whether an object carries serve's label (the cache
// shows it; an object read past the cache may not).
func labelledOwn(l map[string]string) bool { return l[keys.LabelManagedBy] == keys.ServeName }

// watchRestApiServices sets up the Service informers of the trusted
// namespaces when NodeSets find their Slurm through Slinky's objects.
func (c *Controller) watchRestApiServices() []cache.InformerSynced {
	c.restapiServices = map[string]corelisters.ServiceLister{}
	if c.source != nil && c.source.fixed != nil {
		return nil // one Slurm for every NodeSet: no RestApi followed
	}
	var synced []cache.InformerSynced
	for _, ns := range c.flags.namespaces {
		inf := c.opt.KubeInformerFactoryForNamespace(ns).Core().V1().Services()
		c.restapiServices[ns] = inf.Lister()
		synced = append(synced, inf.Informer().HasSynced)
	}
	return synced
}

// restapiService reads a RestApi's Service: only in a trusted namespace.
func (c *Controller) restapiService(ns, name string) (*corev1.Service, error) {
	l, ok := c.restapiServices[ns]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name)
	}
	return l.Services(ns).Get(name)
}
