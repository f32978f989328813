package nodeset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	slinkyv1beta1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/slinky/v1beta1"
)

// createClaims creates the claims the pod's claim templates give it, before
// the pod, as Slinky's operator (and a StatefulSet) does: one per template,
// named <template>-<pod>, labelled with the template's and the NodeSet's
// selector labels. A claim that exists is the pod's (a pod that comes back
// finds its data). Claims are retained: nothing deletes them (retention
// policy Delete is reported as not implemented, see spec.go).
func (c *Controller) createClaims(ctx context.Context, ns *slinkyv1beta1.NodeSet, pod *corev1.Pod) error {
	for _, t := range ns.Spec.VolumeClaimTemplates {
		claim := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claimName(t.Name, pod.Name), Namespace: ns.Namespace,
				Labels: map[string]string{}, Annotations: t.Annotations},
			Spec: *t.Spec.DeepCopy(),
		}
		for k, v := range t.Labels {
			claim.Labels[k] = v
		}
		for k, v := range selectorLabels(ns) {
			claim.Labels[k] = v
		}
		_, err := c.kube.CoreV1().PersistentVolumeClaims(ns.Namespace).Create(ctx, claim, metav1.CreateOptions{FieldManager: FieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("claim %s of pod %s: %w", claim.Name, pod.Name, err)
		}
	}
	return nil
}
