package install

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-vc/kubectl-vc/pkg/apis/keys"
	"github.com/kubectl-vc/kubectl-vc/pkg/cli/util"
	"github.com/kubectl-vc/kubectl-vc/pkg/manifests"
)

// The embedded manifests put serve in DefaultServeNamespace, Volcano's
// volcano-system; --serve-namespace moves it, e.g. where an administrator
// wants serve apart from Volcano's own pods. Everything of serve moves
// together: its Namespace, the namespaced objects, the ServiceAccount the
// bindings name, and the namespace of its leader-election Lease.

// DefaultServeNamespace is where install puts serve unless told otherwise.
const DefaultServeNamespace = keys.VolcanoNamespace

const leaseNamespaceArg = "--leader-elect-resource-namespace="

// setServeNamespace moves the objects of the serve set (and the
// ServiceMonitor) from DefaultServeNamespace to ns.
func setServeNamespace(objs []*unstructured.Unstructured, ns string) error {
	if ns == DefaultServeNamespace {
		return nil
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" && o.GetName() == DefaultServeNamespace {
			o.SetName(ns)
		}
		if o.GetNamespace() == DefaultServeNamespace {
			o.SetNamespace(ns)
		}
		if subjects, ok, _ := unstructured.NestedSlice(o.Object, "subjects"); ok {
			for _, s := range subjects {
				if m, ok := s.(map[string]any); ok && m["namespace"] == DefaultServeNamespace {
					m["namespace"] = ns
				}
			}
			if err := unstructured.SetNestedSlice(o.Object, subjects, "subjects"); err != nil {
				return err
			}
		}
		if o.GetKind() == "Deployment" && o.GetName() == manifests.ServeDeployment {
			err := editServeContainer([]*unstructured.Unstructured{o}, func(cm map[string]any) error {
				args, _ := cm["args"].([]any)
				for i, a := range args {
					if s, ok := a.(string); ok && strings.HasPrefix(s, leaseNamespaceArg) {
						args[i] = leaseNamespaceArg + ns
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

var clusterRoleBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}

// installedServeNamespace is the namespace of serve's ServiceAccount as
// the ClusterRoleBinding kubectl-vc-serve names it (install --rbac and
// --serve both apply it): where a previous install put serve. Without it,
// DefaultServeNamespace.
func installedServeNamespace(ctx context.Context, dyn dynamic.Interface) (string, error) {
	crb, err := dyn.Resource(clusterRoleBindingGVR).Get(ctx, manifests.ServeDeployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return DefaultServeNamespace, nil
	}
	if err != nil {
		return "", fmt.Errorf("read clusterrolebinding %s (where serve is installed): %s", manifests.ServeDeployment, util.Message(err))
	}
	subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects")
	for _, s := range subjects {
		m, _ := s.(map[string]any)
		if m["kind"] == "ServiceAccount" && m["name"] == manifests.ServeDeployment {
			if ns, _ := m["namespace"].(string); ns != "" {
				return ns, nil
			}
		}
	}
	return DefaultServeNamespace, nil
}
