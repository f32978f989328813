package crds

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Apply server-side-applies the CRDs with the given field manager (forcing
// ownership, since the manifests are the source of truth) and waits until
// each one is Established, so that objects of the kinds can be created at once.
func Apply(ctx context.Context, client apiextensionsclient.Interface, fieldManager string, list ...*apiextensionsv1.CustomResourceDefinition) error {
	for _, crd := range list {
		c := crd.DeepCopy()
		c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		c.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		c.ResourceVersion, c.UID, c.ManagedFields, c.CreationTimestamp = "", "", nil, metav1.Time{}
		body, err := json.Marshal(c)
		if err != nil {
			return err
		}
		force := true
		if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, c.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
			return fmt.Errorf("apply CRD %s: %w", c.Name, err)
		}
	}
	for _, crd := range list {
		if err := WaitEstablished(ctx, client, crd.Name, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// WaitEstablished waits until the named CRD has condition Established=True.
func WaitEstablished(ctx context.Context, client apiextensionsclient.Interface, name string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// LoadDir reads every *.yaml CRD manifest in dir (e.g. the upstream CRDs).
func LoadDir(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return Load(os.DirFS(dir), "*.yaml", false)
}
