package command

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
)

// New builds the Command asking a controller to apply action to target
// (of kind gvk), exactly as Volcano's vcctl builds it so that Volcano's own
// controllers act on it: generateName <name>-<lower(action)>-, in
// namespace, a controller owner reference to the target (the garbage
// collector removes the Command with it), and the same reference as
// target. Queue and job actions both use it.
func New(target metav1.Object, gvk schema.GroupVersionKind, action, namespace string) *busv1alpha1.Command {
	ref := metav1.OwnerReference{
		APIVersion:         gvk.GroupVersion().String(),
		Kind:               gvk.Kind,
		Name:               target.GetName(),
		UID:                target.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
	return &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    fmt.Sprintf("%s-%s-", target.GetName(), strings.ToLower(action)),
			Namespace:       namespace,
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Action:       action,
		TargetObject: ref.DeepCopy(),
	}
}
