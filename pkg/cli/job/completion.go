package job

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// Kind lists the jobs of a namespace, for name completion (here and in
// the pod command's --job).
var Kind = completion.Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
	c, err := f.VolcanoClient()
	if err != nil {
		return nil, err
	}
	return c.BatchV1alpha1().Jobs(ns).List(ctx, metav1.ListOptions{})
}}

// FlowNames lists the JobFlows of a namespace, for 'job list --flow'.
var FlowNames = completion.Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
	c, err := f.VolcanoClient()
	if err != nil {
		return nil, err
	}
	return c.FlowV1alpha1().JobFlows(ns).List(ctx, metav1.ListOptions{})
}}
