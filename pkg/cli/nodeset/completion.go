package nodeset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/completion"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
)

// nodeSetPodKind lists the NodeSet pods (slurmd workers) of a namespace.
var nodeSetPodKind = completion.Kind{Namespaced: true, List: func(ctx context.Context, f util.Factory, ns string) (runtime.Object, error) {
	kc, err := f.KubeClient()
	if err != nil {
		return nil, err
	}
	return kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: slinkyv1beta1.LabelAppName + "=" + slinkyv1beta1.AppName})
}}
