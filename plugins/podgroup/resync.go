package podgroup

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
)

// resyncLoop hands every pod still without a group to the workers once per
// resync period, whatever made its last attempt fail: a request dropped
// after --max-requeue-num retries is otherwise never tried again, and no
// event may come to bring it back (a quota raised, a webhook fixed).
func (c *Controller) resyncLoop(ctx context.Context) {
	t := time.NewTicker(c.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, obj := range c.ungrouped() {
				c.wq.Add(request{kind: podKind, namespace: obj.Namespace, name: obj.Name})
			}
		}
	}
}

// ungrouped are the pods of ungroupedIndex.
func (c *Controller) ungrouped() []*corev1.Pod {
	return c.pods.byIndex(ungroupedIndex, ungroupedValue)
}

// indexUngrouped is the index function of ungroupedIndex.
func (c *Controller) indexUngrouped(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || !c.wants(&pod.Spec) || pod.Annotations[keys.KubeGroupName] != "" || !live(pod) {
		return nil, nil
	}
	return []string{ungroupedValue}, nil
}
