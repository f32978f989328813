package queue

import (
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/apis/scheduling/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/controller/framework"
)

// CacheReads implements framework.Controller. Queues and Commands are few
// and read whole; of a PodGroup only its queue and phase count. Against an
// API server those come from Table rows (watchPodGroups), not the shared
// informer; the declaration covers the informer that feeds the counts when
// the clients cannot ask for Tables (fake clientsets).
func (c *Controller) CacheReads() []framework.CacheRead {
	return []framework.CacheRead{
		framework.ReadsAll[v1beta1.Queue](),
		framework.ReadsAll[v1alpha1.Command](),
		framework.ReadsOnly(func(dst, src *v1beta1.PodGroup) {
			dst.Spec.Queue = src.Spec.Queue
			dst.Status.Phase = src.Status.Phase
		}),
	}
}
