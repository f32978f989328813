// Package podcontrol holds every write the NodeSet controller makes to
// its pods and their PersistentVolumeClaims, behind one small interface:
// the sync decides, podcontrol writes, each write under the controller's
// field manager. (Reads come from the informers' listers, except a claim's,
// read from the API server right before it is changed.)
package podcontrol

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Interface is the NodeSet controller's pod and claim writes.
type Interface interface {
	// CreatePod creates pod in namespace.
	CreatePod(ctx context.Context, namespace string, pod *corev1.Pod) (*corev1.Pod, error)
	// PatchPod patches a pod; subresources name one ("status") to patch
	// that instead.
	PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte, subresources ...string) (*corev1.Pod, error)
	// DeletePod deletes exactly the pod of that UID (a precondition): a
	// pod of the same name made since is left alone.
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
	// CreateClaim creates a claim in namespace.
	CreateClaim(ctx context.Context, namespace string, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error)
	// GetClaim reads a claim from the API server (not a cache: its owners
	// are about to be changed from what it says).
	GetClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	// PatchClaim patches a claim.
	PatchClaim(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.PersistentVolumeClaim, error)
}

// New is the Interface that writes through kube as fieldManager.
func New(kube kubernetes.Interface, fieldManager string) Interface {
	return client{kube: kube, manager: fieldManager}
}

type client struct {
	kube    kubernetes.Interface
	manager string
}

func (c client) CreatePod(ctx context.Context, namespace string, pod *corev1.Pod) (*corev1.Pod, error) {
	return c.kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: c.manager})
}

func (c client) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte, subresources ...string) (*corev1.Pod, error) {
	return c.kube.CoreV1().Pods(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{FieldManager: c.manager}, subresources...)
}

func (c client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	return c.kube.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

func (c client) CreateClaim(ctx context.Context, namespace string, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	return c.kube.CoreV1().PersistentVolumeClaims(namespace).Create(ctx, claim, metav1.CreateOptions{FieldManager: c.manager})
}

func (c client) GetClaim(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return c.kube.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (c client) PatchClaim(ctx context.Context, namespace, name string, pt types.PatchType, patch []byte) (*corev1.PersistentVolumeClaim, error) {
	return c.kube.CoreV1().PersistentVolumeClaims(namespace).Patch(ctx, name, pt, patch, metav1.PatchOptions{FieldManager: c.manager})
}
