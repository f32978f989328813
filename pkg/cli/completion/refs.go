package completion

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Queues, Jobs and JobFlows complete the names a kind's flags take of
// another kind (--queue, --job, --flow): each kind's package declares its
// own kind.Kind, and a kind imports no other kind's package, so the
// objects other kinds refer to are listed here.
var (
	Queues = Kind{List: func(ctx context.Context, f util.Factory, _ string) (runtime.Object, error) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, err
		}
		return c.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	}}
	Jobs = Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, err
		}
		return c.BatchV1alpha1().Jobs(ns).List(ctx, metav1.ListOptions{})
	}}
	JobFlows = Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
		c, err := f.VolcanoClient()
		if err != nil {
			return nil, err
		}
		return c.FlowV1alpha1().JobFlows(ns).List(ctx, metav1.ListOptions{})
	}}
)
