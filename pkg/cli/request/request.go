// Package request writes the Commands (bus.volcano.sh) that ask a
// controller to act on an object, exactly as Volcano's vcctl writes them:
// 'queue open|close' and 'job suspend|resume|restart|terminate'. It is
// apart from pkg/cli/command (the 'command' group, which lists and deletes
// Commands) so that the group can complete the names of the queues and
// jobs whose packages write them.
package request

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/kubectl-vc/kubectl-vc/pkg/apis/bus/v1alpha1"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/client/clientset/versioned"
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

// Create writes cm in its namespace (nothing on a client dry run, a
// server dry run with dryServer) and returns it as written.
func Create(ctx context.Context, c versioned.Interface, cm *busv1alpha1.Command, dryClient, dryServer bool) (*busv1alpha1.Command, error) {
	if dryClient {
		return cm, nil
	}
	return c.BusV1alpha1().Commands(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{DryRun: util.DryRunOpts(dryServer)})
}
