package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kubectl-vc/kubectl-vc/pkg/controller/quietlog"
)

// quietSecrets is the clientset the controllers get: every request of
// its Secrets client runs with a logger that drops client-go's body logs
// (quietlog), so no verbosity puts a Secret's data (the Slurm JWT key the
// NodeSet controller reads) in serve's log. Wrapping the clientset, not
// the callers, keeps it so for whichever controller reads Secrets, by GET
// or by an informer's list and watch.
type quietSecrets struct {
	kubernetes.Interface
}

func (c quietSecrets) CoreV1() typedcorev1.CoreV1Interface {
	return quietCoreV1{c.Interface.CoreV1()}
}

type quietCoreV1 struct {
	typedcorev1.CoreV1Interface
}

func (c quietCoreV1) Secrets(namespace string) typedcorev1.SecretInterface {
	return quietSecretClient{c.CoreV1Interface.Secrets(namespace)}
}

type quietSecretClient struct {
	typedcorev1.SecretInterface
}

func (c quietSecretClient) Create(ctx context.Context, s *corev1.Secret, o metav1.CreateOptions) (*corev1.Secret, error) {
	return c.SecretInterface.Create(quietlog.Context(ctx), s, o)
}

func (c quietSecretClient) Update(ctx context.Context, s *corev1.Secret, o metav1.UpdateOptions) (*corev1.Secret, error) {
	return c.SecretInterface.Update(quietlog.Context(ctx), s, o)
}

func (c quietSecretClient) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	return c.SecretInterface.Delete(quietlog.Context(ctx), name, o)
}

func (c quietSecretClient) DeleteCollection(ctx context.Context, o metav1.DeleteOptions, l metav1.ListOptions) error {
	return c.SecretInterface.DeleteCollection(quietlog.Context(ctx), o, l)
}

func (c quietSecretClient) Get(ctx context.Context, name string, o metav1.GetOptions) (*corev1.Secret, error) {
	return c.SecretInterface.Get(quietlog.Context(ctx), name, o)
}

func (c quietSecretClient) List(ctx context.Context, o metav1.ListOptions) (*corev1.SecretList, error) {
	return c.SecretInterface.List(quietlog.Context(ctx), o)
}

func (c quietSecretClient) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return c.SecretInterface.Watch(quietlog.Context(ctx), o)
}

func (c quietSecretClient) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*corev1.Secret, error) {
	return c.SecretInterface.Patch(quietlog.Context(ctx), name, pt, data, o, sub...)
}

func (c quietSecretClient) Apply(ctx context.Context, s *applycorev1.SecretApplyConfiguration, o metav1.ApplyOptions) (*corev1.Secret, error) {
	return c.SecretInterface.Apply(quietlog.Context(ctx), s, o)
}
